import { type BatchLine, type BatchLineProblem, readBatchLines } from "../../src/shared/batch.js";

/** One line of a batch: a URL, and for a trace where its chain should end. */
export type BatchEntry = BatchLine;

/** The service's limit per batch; the page refuses more before sending anything. */
const MAX_BATCH_ITEMS = 100;

export type ParsedBatch = { readonly ok: true; readonly entries: readonly BatchEntry[] } | { readonly ok: false; readonly problem: string };

/** What people paste: one URL per line, or a two-column CSV `url,expected final URL` (readBatchLines). */
export function parseBatch(text: string): ParsedBatch {
  const read = readBatchLines(text);
  if (!read.ok) return { ok: false, problem: PROBLEMS[read.problem.kind](read.problem.line) };
  const entries = read.lines;
  if (entries.length === 0) return { ok: false, problem: "Paste at least one URL." };
  if (entries.length > MAX_BATCH_ITEMS) return { ok: false, problem: `${entries.length} URLs: a batch takes at most ${MAX_BATCH_ITEMS}.` };
  return { ok: true, entries };
}

const PROBLEMS: Readonly<Record<BatchLineProblem["kind"], (line: number) => string>> = {
  unclosed_quote: (line) => `line ${line}: an unterminated quote`,
  too_many_fields: (line) => `line ${line}: more than two columns (url, expected final URL)`,
  no_url: (line) => `line ${line}: no URL in the first column`,
  bad_max_redirects: (line) => `line ${line}: max_redirects is a whole number from 0 to 20`,
};
