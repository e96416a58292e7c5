import { csvFields } from "../../src/csv-fields.js";

/** One line of a batch: a URL, and for a trace where its chain should end. */
export interface BatchEntry {
  readonly url: string;
  readonly expectedFinalUrl: string | undefined;
}

/** The service's limit per batch; the page refuses more before sending anything. */
export const MAX_BATCH_ITEMS = 100;

export type ParsedBatch = { readonly ok: true; readonly entries: readonly BatchEntry[] } | { readonly ok: false; readonly problem: string };

/**
 * Reads what people paste: one URL per line, or a two-column CSV
 * `url,expected final URL` (a header line naming `url` first is skipped;
 * fields may be double-quoted, "" inside quotes is a quote). Blank lines and
 * lines starting with # are ignored.
 */
export function parseBatch(text: string): ParsedBatch {
  const entries: BatchEntry[] = [];
  const lines = text.split(/\r?\n/);
  for (const [number, line] of lines.entries()) {
    if (line.trim() === "" || line.trim().startsWith("#")) continue;
    const fields = csvFields(line);
    if (fields === undefined) return { ok: false, problem: `line ${number + 1}: an unterminated quote` };
    const [url = "", expected = "", ...rest] = fields.map((field) => field.trim());
    if (entries.length === 0 && url.toLowerCase() === "url") continue;
    if (rest.some((field) => field !== "")) return { ok: false, problem: `line ${number + 1}: more than two columns (url, expected final URL)` };
    if (url === "") return { ok: false, problem: `line ${number + 1}: no URL in the first column` };
    entries.push({ url, expectedFinalUrl: expected === "" ? undefined : expected });
  }
  if (entries.length === 0) return { ok: false, problem: "Paste at least one URL." };
  if (entries.length > MAX_BATCH_ITEMS) return { ok: false, problem: `${entries.length} URLs: a batch takes at most ${MAX_BATCH_ITEMS}.` };
  return { ok: true, entries };
}

/** A CSV file of rows: fields quoted when needed, and a cell a spreadsheet would run as a formula made inert. */
export function toCsv(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => row.map(csvCell).join(",")).join("\r\n") + "\r\n";
}

function csvCell(value: string): string {
  const inert = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(inert) ? `"${inert.replaceAll('"', '""')}"` : inert;
}
