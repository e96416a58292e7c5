import { BATCH, REDIRECT_TRACE } from "./limits.js";

// What a batch is, below every layer: its lines as people write them (the
// CLI's files, the page's pasted batches) and the size rule every batch is held to.

/** One line of a batch: a URL, and for a trace where its chain should end. */
export interface BatchLine {
  readonly url: string;
  readonly expectedFinalUrl: string | undefined;
  /** The most redirects this line's chain may take (its `max_redirects` column), when it names one. */
  readonly maxRedirects?: number;
  /** The verdict a batch report gave this line before (its `verdict` column), when the text is such a report. */
  readonly verdict?: string;
  /** The code a batch report gave this line before (its `code` column), when the text is such a report. */
  readonly code?: string;
}

/** Why a batch cannot be read, with the 1-based line it was found on; each reader words it for its audience. */
export type BatchLineProblem =
  | { readonly kind: "unclosed_quote"; readonly line: number }
  | { readonly kind: "too_many_fields"; readonly line: number; readonly fields: number }
  | { readonly kind: "no_url"; readonly line: number }
  | { readonly kind: "bad_max_redirects"; readonly line: number; readonly value: string };

export type BatchLines =
  | { readonly ok: true; readonly lines: readonly BatchLine[] }
  | { readonly ok: false; readonly problem: BatchLineProblem };

/** Where a header put the columns a batch reads; the plain form is url then expected. */
interface Columns {
  readonly url: number;
  readonly expected: number | undefined;
  readonly verdict: number | undefined;
  readonly code: number | undefined;
  readonly maxRedirects: number | undefined;
  /** Fields a line may have: two in the plain form, the header's count in a report. */
  readonly width: number;
}

const PLAIN: Columns = { url: 0, expected: 1, verdict: undefined, code: undefined, maxRedirects: undefined, width: 2 };

/**
 * Reads `url[,expected final URL]` lines, as the CLI's batch files and the
 * page's pasted batches both take them: RFC 4180 quoting (csvFields), blank
 * lines and lines starting with `#` skipped, a first line with a field
 * `url` taken as a header, empty fields past the last column ignored (a
 * spreadsheet's trailing commas). A header may name more columns, as a
 * batch report's CSV does (src/shared/batch-verdict.ts): then `url`,
 * `expected_final_url` (or `expected`) and `verdict` are read from where it
 * puts them, so a report can be run again, and a `max_redirects` column
 * gives a line its own chain-length limit (0 to 20). Counting and limits are the caller's.
 */
export function readBatchLines(text: string): BatchLines {
  const lines: BatchLine[] = [];
  let columns: Columns | undefined;
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    if (line.trim() === "" || line.trim().startsWith("#")) continue;
    const number = index + 1;
    const fields = csvFields(line)?.map((field) => field.trim());
    if (fields === undefined) return { ok: false, problem: { kind: "unclosed_quote", line: number } };
    if (columns === undefined) {
      columns = headerColumns(fields);
      if (columns !== undefined) continue;
      columns = PLAIN;
    }
    while (fields.length > columns.width && fields.at(-1) === "") fields.pop();
    if (fields.length > columns.width) return { ok: false, problem: { kind: "too_many_fields", line: number, fields: fields.length } };
    const url = fields[columns.url] ?? "";
    const expected = columns.expected === undefined ? "" : (fields[columns.expected] ?? "");
    const verdict = columns.verdict === undefined ? undefined : (fields[columns.verdict] ?? "");
    const code = columns.code === undefined ? undefined : (fields[columns.code] ?? "");
    const limitText = columns.maxRedirects === undefined ? "" : (fields[columns.maxRedirects] ?? "");
    if (url === "") return { ok: false, problem: { kind: "no_url", line: number } };
    const maxRedirects = limitText === "" ? undefined : redirectLimit(limitText);
    if (maxRedirects === null) return { ok: false, problem: { kind: "bad_max_redirects", line: number, value: limitText } };
    lines.push({
      url,
      expectedFinalUrl: expected === "" ? undefined : expected,
      ...(maxRedirects === undefined ? {} : { maxRedirects }),
      ...(verdict === undefined ? {} : { verdict }),
      ...(code === undefined ? {} : { code }),
    });
  }
  return { ok: true, lines };
}

/** The columns a header line names, or undefined when the line is not a header (it has no field `url`). */
function headerColumns(fields: readonly string[]): Columns | undefined {
  const names = fields.map((field) => field.toLowerCase());
  const url = names.indexOf("url");
  if (url === -1) return undefined;
  const find = (...candidates: string[]) => {
    const found = names.findIndex((name) => candidates.includes(name));
    return found === -1 ? undefined : found;
  };
  const maxRedirects = find("max_redirects");
  // A two-field header keeps the plain form whatever its second field says ("url,expected", "URL,target"), unless it is a limit.
  if (fields.length <= 2 && url === 0 && maxRedirects === undefined) return PLAIN;
  return {
    url,
    expected: find("expected_final_url", "expected", "expected final url"),
    verdict: find("verdict"),
    code: find("code"),
    maxRedirects,
    width: Math.max(fields.length, 2),
  };
}

/**
 * A chain-length limit as people write it: a whole number from 0 to the
 * contract's 20 redirects; null when the text is not one. The CLI's
 * --max-redirects and the page's field read theirs with this too.
 */
export function redirectLimit(text: string): number | null {
  const trimmed = text.trim();
  if (!/^\d{1,2}$/.test(trimmed)) return null;
  const limit = Number(trimmed);
  return limit <= REDIRECT_TRACE.maxRedirects ? limit : null;
}

/**
 * The fields of one CSV line (RFC 4180 quoting: a field may be double-quoted,
 * "" inside quotes is a quote, so a URL holding a comma survives); undefined
 * when a quote is left open. The CLI's batch files and the page's pasted
 * batches read their lines with this one function.
 */
function csvFields(line: string): string[] | undefined {
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
