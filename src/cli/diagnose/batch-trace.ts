import { open } from "node:fs/promises";
import { type BatchLine, type BatchLineProblem, readBatchLines, redirectLimit } from "../../shared/batch.js";
import { TraceRedirectsResponseSchema, type TraceRedirectsBatchResponse } from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { renderMessage } from "../../server/rest/rest-render.js";
import { traceBatch } from "../../service/trace-redirects-batch.js";
import type { CommandIo } from "../command.js";
import { batchCsv, refusedAtInput, traceVerdict } from "../../shared/batch-verdict.js";
import { flag, readArguments, text as textOption, usageProblem } from "../arguments.js";
import { REDIRECT_TRACE } from "../../shared/limits.js";
import { batchRecords, renderBatchSummary, toLookAt } from "../report/batch-report.js";
import { commandOf, EXIT, reportInterrupted, withDiagnosticRunner } from "./diagnose-command.js";
import { createPaint, wantsColour } from "../report/terminal-text.js";
import { jsonText, terminalSafe } from "../report/terminal-safe.js";
import { userAgentFromText, userAgentOptionOf } from "../../shared/user-agent-option.js";
import { create } from "@bufbuild/protobuf";

/**
 * `sitediag trace --batch FILE [--json | --csv]`: every row of a
 * `url[,expected]` CSV traced from this machine (no server, no key, no
 * credits), eight at a time, as TraceRedirectsBatch traces them. On a
 * terminal, progress on stderr and a table at the end; with --json, one
 * NDJSON line per item as it completes; with --csv, the page's CSV at the
 * end. Exit 1 when any row fails the batch verdict (src/shared/batch-verdict.ts:
 * no result, a broken chain, an expectation not met, a final 4xx/5xx).
 */
export async function runBatchTrace(argv: readonly string[], io: CommandIo, help: string): Promise<number> {
  const command = commandOf(help);
  const options = {
    batch: { type: "string" },
    json: { type: "boolean" },
    csv: { type: "boolean" },
    "rerun-failed": { type: "boolean" },
    "include-refused": { type: "boolean" },
    "max-redirects": { type: "string" },
    "user-agent": { type: "string" },
  } as const;
  const read = readArguments(argv, options, false, SINGLE_ONLY);
  const usage = (problem: string) => {
    io.stderr.write(usageProblem(command, problem));
    return EXIT.badInput;
  };
  if (!read.ok) return usage(read.problem);
  const { values } = read;
  // Conflicts are said before anything is read.
  if (flag(values, "json") && flag(values, "csv")) return usage("--json and --csv are two ways to print the same rows: choose one");
  if (flag(values, "include-refused") && !flag(values, "rerun-failed")) return usage("--include-refused goes with --rerun-failed");
  const limitText = textOption(values, "max-redirects");
  const maxRedirects = limitText === undefined ? undefined : redirectLimit(limitText);
  if (maxRedirects === null)
    return usage(
      `--max-redirects takes a whole number from 0 to ${REDIRECT_TRACE.maxRedirects}, not ${JSON.stringify(limitText?.slice(0, 20))}`,
    );
  const userAgent = userAgentFromText(textOption(values, "user-agent"));
  if (!userAgent.ok) return usage(userAgent.problem);
  const source = textOption(values, "batch") ?? "";
  const text = await readBounded(source, io);
  if (typeof text !== "string") {
    io.stderr.write(`cannot read ${source === "-" ? "standard input" : source}: ${text.problem}\n`);
    return EXIT.badInput;
  }
  const file = parseBatchFile(text);
  if (!file.ok) {
    io.stderr.write(`${source}: ${file.problem}\n`);
    return EXIT.badInput;
  }
  const again = flag(values, "rerun-failed") ? failedRows(file.rows, flag(values, "include-refused")) : { rows: file.rows, refused: 0 };
  if (typeof again === "string") {
    io.stderr.write(`${source}: ${again}\n`);
    return EXIT.badInput;
  }
  // The line's own limit wins over --max-redirects.
  const rows =
    maxRedirects === undefined ? again.rows : again.rows.map((row) => ({ ...row, maxRedirects: row.maxRedirects ?? maxRedirects }));
  const skipped =
    again.refused === 0
      ? ""
      : `; ${again.refused} row${again.refused === 1 ? "" : "s"} refused at input skipped (they cannot trace as written; --include-refused runs them too)`;
  if (rows.length === 0) {
    io.stderr.write(`${source}: every row passed${skipped}; nothing to re-run\n`);
    return EXIT.healthy;
  }
  if (skipped !== "") io.stderr.write(`${source}: re-running ${rows.length} row${rows.length === 1 ? "" : "s"}${skipped}\n`);
  const json = flag(values, "json");
  const csv = flag(values, "csv");
  const progress = io.stderr.isTTY === true && !json;
  return withDiagnosticRunner(io, async (runner, signal) => {
    const items: TraceRedirectsBatchResponse[] = [];
    let failed = 0;
    // Every row with details: the verdict reads what the final page tells search engines (src/shared/search-verdict.ts); --json leaves details out, as before.
    for await (const item of traceBatch(rows, runner, signal, Object.assign({ details: true }, userAgentOptionOf(userAgent.id)))) {
      items.push(item);
      if (json) io.stdout.write(`${jsonText(ndjsonLine(item))}\n`);
      if (traceVerdict(item).verdict === "FAIL") failed += 1;
      if (progress) io.stderr.write(`\rtraced ${items.length}/${rows.length}, ${failed} to look at`);
    }
    if (progress) io.stderr.write("\n");
    if (signal.aborted) return reportInterrupted(io);
    // Reasons quote what targets answered; the CSV goes to a terminal as often as to a file.
    const records = terminalSafe(batchRecords(items, (index) => rows[index]));
    if (csv) io.stdout.write(batchCsv(records));
    else if (!json) io.stdout.write(renderBatchSummary(records, createPaint(wantsColour(io.stdout, io.env ?? process.env))));
    return toLookAt(records) === 0 ? EXIT.healthy : EXIT.broken;
  });
}

/**
 * The rows of a batch report (its CSV, from --csv or the page) whose verdict
 * was not PASS, to trace again; a reason when the file is not such a report.
 * A row refused at input (its code input_*: not a URL, a private address)
 * cannot trace as written, so it is left out unless `includeRefused`, and counted.
 */
function failedRows(
  rows: readonly BatchRow[],
  includeRefused: boolean,
): { readonly rows: readonly BatchRow[]; readonly refused: number } | string {
  if (rows.some((row) => row.verdict === undefined)) {
    return "--rerun-failed reads a batch report: a CSV with a verdict column, as --csv and the page's Download CSV write it";
  }
  const failed = rows.filter((row) => row.verdict !== "PASS");
  const again = includeRefused ? failed : failed.filter((row) => !refusedAtInput(row.code ?? ""));
  return { rows: again, refused: failed.length - again.length };
}

/** Options of a single trace, said as such when given with --batch. */
const SINGLE_ONLY: Readonly<Record<string, string>> = {
  details: "goes with a single trace (with --batch, --json prints each row's details)",
  headers: "goes with a single trace, not --batch",
  vantages: "goes with a single trace, not --batch",
};

/** One item as the REST batch door will stream it: the envelope's `ok` and `data` or `error`, with the item's place and its batch verdict. */
function ndjsonLine(item: TraceRedirectsBatchResponse): Record<string, unknown> {
  const place = { index: item.index, url: item.url, verdict: traceVerdict(item) };
  if (item.outcome.case !== "result") {
    const error = item.outcome.case === "error" ? item.outcome.value : { code: "internal", message: "no result", refusalCode: undefined };
    const limit = item.maxRedirects === undefined ? {} : { maxRedirects: item.maxRedirects };
    return {
      ok: false,
      error: { code: error.code, message: error.message, ...(error.refusalCode === undefined ? {} : { refusalCode: error.refusalCode }) },
      ...limit,
      ...place,
    };
  }
  const expectation =
    item.expectation === undefined ? null : { matches: item.expectation.matches, reason: item.expectation.reason ?? null };
  const limit = item.maxRedirects === undefined ? {} : { maxRedirects: item.maxRedirects };
  const data = renderMessage(
    TraceRedirectsResponseSchema,
    create(TraceRedirectsResponseSchema, Object.assign({}, item.outcome.value, { details: undefined })),
  );
  return { ok: true, data, expectation, ...limit, ...place };
}

/** The whole file (or standard input for "-"), refusing anything over MAX_BATCH_FILE_BYTES before reading past it. */
async function readBounded(source: string, io: CommandIo): Promise<string | { readonly problem: string }> {
  if (source === "") return { problem: "--batch needs a file (or - for standard input)" };
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    const stream = source === "-" ? io.stdin : (await open(source, "r")).createReadStream();
    if (stream === undefined) return { problem: "no standard input here" };
    for await (const chunk of stream) {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
      size += bytes.length;
      if (size > MAX_BATCH_FILE_BYTES) return { problem: `more than ${MAX_BATCH_FILE_BYTES / 1024 / 1024} MiB` };
      chunks.push(bytes);
    }
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** One row of a batch file: a URL, and where its chain should end. */
export type BatchRow = BatchLine;

export type BatchFile = { readonly ok: true; readonly rows: readonly BatchRow[] } | { readonly ok: false; readonly problem: string };

/** A migration audit is hundreds of URLs; these bound what one command reads before it starts. */
const MAX_BATCH_FILE_BYTES = 8 * 1024 * 1024;
const MAX_BATCH_ROWS = 10_000;

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
    case "bad_max_redirects":
      return `line ${problem.line}: max_redirects is a whole number from 0 to ${REDIRECT_TRACE.maxRedirects}, not ${JSON.stringify(problem.value.slice(0, 20))}`;
  }
}
