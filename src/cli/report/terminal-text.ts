import { stripVTControlCharacters } from "node:util";
import type { Environment } from "../../config.js";
import type { TextWriter } from "../command.js";

/** How a report marks what matters. With colour off every style is the identity, so reports are plain text. */
export interface Paint {
  readonly good: (text: string) => string;
  readonly notice: (text: string) => string;
  readonly warn: (text: string) => string;
  readonly bad: (text: string) => string;
  readonly dim: (text: string) => string;
  readonly strong: (text: string) => string;
  /** An HTTP status by class: 2xx good, 3xx notice, 4xx warn, 5xx bad. */
  readonly status: (status: number, text: string) => string;
}

/** SGR sequences, opened and closed per span so a span never leaks into the next cell. */
const SGR = {
  green: [32, 39],
  cyan: [36, 39],
  yellow: [33, 39],
  red: [31, 39],
  dim: [2, 22],
  bold: [1, 22],
} as const;

export function createPaint(colour: boolean): Paint {
  const style = (codes: readonly [number, number]) => (text: string) =>
    colour && text !== "" ? `\u001b[${codes[0]}m${text}\u001b[${codes[1]}m` : text;
  const good = style(SGR.green);
  const notice = style(SGR.cyan);
  const warn = style(SGR.yellow);
  const bad = style(SGR.red);
  return {
    good,
    notice,
    warn,
    bad,
    dim: style(SGR.dim),
    strong: style(SGR.bold),
    status: (status, text) => (status >= 500 ? bad(text) : status >= 400 ? warn(text) : status >= 300 ? notice(text) : good(text)),
  };
}

/**
 * Colour only for a person at a terminal: stdout must be a TTY (a pipe or a
 * file gets plain text), and NO_COLOR, when set to anything non-empty, turns
 * it off (https://no-color.org).
 */
export function wantsColour(stdout: TextWriter, env: Environment): boolean {
  const noColor = env["NO_COLOR"];
  if (noColor !== undefined && noColor !== "") return false;
  return stdout.isTTY === true;
}

/**
 * Lays rows out in aligned columns, two spaces apart, each line indented by
 * `indent`. Widths are measured without colour codes, so painted cells line
 * up with plain ones. The last column is never padded (it holds URLs).
 */
export function textTable(rows: readonly (readonly string[])[], indent = "  "): string {
  const columns = Math.max(0, ...rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, column) => Math.max(0, ...rows.map((row) => visibleWidth(row[column] ?? ""))));
  return rows
    .map((row) => {
      const cells = row.map((cell, column) => (column === row.length - 1 ? cell : pad(cell, widths[column] ?? 0)));
      return `${indent}${cells.join("  ")}`.trimEnd() + "\n";
    })
    .join("");
}

/**
 * One line of a table whose rows come one at a time (so no later row can
 * widen a column): each cell but the last padded to its column's width.
 */
export function fixedColumns(row: readonly string[], widths: readonly number[]): string {
  const cells = row.map((cell, column) => (column === row.length - 1 ? cell : pad(cell, widths[column] ?? 0)));
  return `${cells.join("  ").trimEnd()}\n`;
}

function visibleWidth(text: string): number {
  return [...stripVTControlCharacters(text)].length;
}

function pad(cell: string, width: number): string {
  return cell + " ".repeat(Math.max(0, width - visibleWidth(cell)));
}
