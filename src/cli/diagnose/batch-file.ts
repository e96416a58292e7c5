import { type BatchLine, type BatchLineProblem, readBatchLines } from "../../batch.js";

/** One row of a batch file: a URL, and where its chain should end. */
export type BatchRow = BatchLine;

export type BatchFile = { readonly ok: true; readonly rows: readonly BatchRow[] } | { readonly ok: false; readonly problem: string };

/** A migration audit is hundreds of URLs; these bound what one command reads before it starts. */
export const MAX_BATCH_FILE_BYTES = 8 * 1024 * 1024;
export const MAX_BATCH_ROWS = 10_000;

/** Reads a `url[,expected]` CSV file (readBatchLines), refused with the line of its first problem. */
export function parseBatchFile(text: string): BatchFile {
  const read = readBatchLines(text);
  if (!read.ok) return { ok: false, problem: problemText(read.problem) };
  const rows = read.lines;
  if (rows.length > MAX_BATCH_ROWS) return { ok: false, problem: `more than ${MAX_BATCH_ROWS} rows; split the file` };
  if (rows.length === 0) return { ok: false, problem: "the file has no rows" };
  return { ok: true, rows };
}

function problemText(problem: BatchLineProblem): string {
  switch (problem.kind) {
    case "unclosed_quote":
      return `line ${problem.line}: a quoted field is not closed`;
    case "too_many_fields":
      return `line ${problem.line}: expected url[,expected], found ${problem.fields} fields`;
    case "no_url":
      return `line ${problem.line}: the url is empty`;
  }
}
