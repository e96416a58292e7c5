import { BATCH } from "./limits.js";

// What a batch is, below every layer: its lines as people write them (the
// CLI's files, the page's pasted batches) and the size rule every batch is held to.

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

/**
 * The fields of one CSV line (RFC 4180 quoting: a field may be double-quoted,
 * "" inside quotes is a quote, so a URL holding a comma survives); undefined
 * when a quote is left open. The CLI's batch files and the page's pasted
 * batches read their lines with this one function.
 */
export function csvFields(line: string): string[] | undefined {
  const fields: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"' && field.trim() === "") {
      quoted = true;
      field = "";
    } else if (char === ",") {
      fields.push(field);
      field = "";
    } else field += char;
  }
  if (quoted) return undefined;
  fields.push(field);
  return fields;
}

/**
 * The size rule of every batch. The access layer checks it before anything
 * is charged (a batch's price is its size, so a batch outside the rule has
 * no price, only a reason to refuse), and the service checks it again for
 * callers that reach it without that layer.
 */
export function batchSizeProblem(count: number): string | undefined {
  if (count === 0) return "a batch needs at least one item";
  if (count > BATCH.maxItems) return `a batch holds at most ${BATCH.maxItems} items, this one has ${count}`;
  return undefined;
}
