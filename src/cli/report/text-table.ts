import { stripVTControlCharacters } from "node:util";

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

function visibleWidth(text: string): number {
  return [...stripVTControlCharacters(text)].length;
}

function pad(cell: string, width: number): string {
  return cell + " ".repeat(Math.max(0, width - visibleWidth(cell)));
}
