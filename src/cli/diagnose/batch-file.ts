import { csvFields } from "../../csv-fields.js";

/** One row of a batch file: a URL, and where its chain should end. */
export interface BatchRow {
  readonly url: string;
  readonly expectedFinalUrl?: string;
}

export type BatchFile = { readonly ok: true; readonly rows: readonly BatchRow[] } | { readonly ok: false; readonly problem: string };

/** A migration audit is hundreds of URLs; these bound what one command reads before it starts. */
export const MAX_BATCH_FILE_BYTES = 8 * 1024 * 1024;
export const MAX_BATCH_ROWS = 10_000;

/**
 * Reads `url[,expected]` CSV (RFC 4180 quoting, so a URL holding a comma can
 * be quoted): blank lines and lines starting with `#` are skipped, and a
 * first row whose first field is `url` is a header. A row with more than two
 * fields, or an unterminated quote, is refused with its line number.
 */
export function parseBatchFile(text: string): BatchFile {
  const rows: BatchRow[] = [];
  const lines = text.split(/\r?\n/);
  for (const [at, line] of lines.entries()) {
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    const fields = csvFields(line);
    if (fields === undefined) return { ok: false, problem: `line ${at + 1}: a quoted field is not closed` };
    if (fields.length > 2) return { ok: false, problem: `line ${at + 1}: expected url[,expected], found ${fields.length} fields` };
    const [url = "", expected = ""] = fields.map((field) => field.trim());
    if (rows.length === 0 && url.toLowerCase() === "url") continue;
    if (url === "") return { ok: false, problem: `line ${at + 1}: the url is empty` };
    rows.push(expected === "" ? { url } : { url, expectedFinalUrl: expected });
    if (rows.length > MAX_BATCH_ROWS) return { ok: false, problem: `more than ${MAX_BATCH_ROWS} rows; split the file` };
  }
  if (rows.length === 0) return { ok: false, problem: "the file has no rows" };
  return { ok: true, rows };
}
