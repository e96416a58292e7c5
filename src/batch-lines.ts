import { csvFields } from "./csv-fields.js";

/** One line of a batch: a URL, and for a trace where its chain should end. */
export interface BatchLine {
  readonly url: string;
  readonly expectedFinalUrl: string | undefined;
}

/** Why a batch cannot be read, with the 1-based line it was found on; each reader words it for its audience. */
export type BatchLineProblem =
  | { readonly kind: "unclosed_quote"; readonly line: number }
  | { readonly kind: "too_many_fields"; readonly line: number; readonly fields: number }
  | { readonly kind: "no_url"; readonly line: number };

export type BatchLines = { readonly ok: true; readonly lines: readonly BatchLine[] } | { readonly ok: false; readonly problem: BatchLineProblem };

/**
 * Reads `url[,expected final URL]` lines, as the CLI's batch files and the
 * page's pasted batches both take them: RFC 4180 quoting (csvFields), blank
 * lines and lines starting with `#` skipped, a first line whose first field
 * is `url` taken as a header, empty fields after the second ignored (a
 * spreadsheet's trailing commas). Counting and limits are the caller's.
 */
export function readBatchLines(text: string): BatchLines {
  const lines: BatchLine[] = [];
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    if (line.trim() === "" || line.trim().startsWith("#")) continue;
    const number = index + 1;
    const fields = csvFields(line)?.map((field) => field.trim());
    if (fields === undefined) return { ok: false, problem: { kind: "unclosed_quote", line: number } };
    while (fields.length > 2 && fields.at(-1) === "") fields.pop();
    if (fields.length > 2) return { ok: false, problem: { kind: "too_many_fields", line: number, fields: fields.length } };
    const [url = "", expected = ""] = fields;
    if (lines.length === 0 && url.toLowerCase() === "url") continue;
    if (url === "") return { ok: false, problem: { kind: "no_url", line: number } };
    lines.push({ url, expectedFinalUrl: expected === "" ? undefined : expected });
  }
  return { ok: true, lines };
}
