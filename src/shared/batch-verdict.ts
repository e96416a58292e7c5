import {
  ChainStatus,
  type CheckSitesResponse,
  SiteStatus,
  type TraceRedirectsBatchResponse,
  WarningSeverity,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import { failingSearchWarning, searchNotes } from "./search-verdict.js";

// The one rule for "needs a look" in a batch, and the record each row of a
// batch becomes: the CLI's table and CSV, the page's table and its CSV all
// read these, so a row passes or fails the same way everywhere.

/** A finished item passed or failed; NOT RUN is a row whose item never ran (the batch was refused or stopped first). */
export type BatchVerdictWord = "PASS" | "FAIL" | "NOT RUN";

export interface BatchVerdict {
  readonly verdict: "PASS" | "FAIL";
  /** A stable snake_case code of why it failed (a warning code, an item error's code, expectation_not_met, ...); "" when it passed. */
  readonly code: string;
  /** Why, for a person; "" when there is nothing to say. */
  readonly reason: string;
}

const NORMAL_CHAINS: ReadonlySet<ChainStatus> = new Set([ChainStatus.HEALTHY, ChainStatus.REDIRECTS_DETECTED]);

/**
 * A traced item fails when it has no result (a refused or invalid URL, with
 * the refusal's input_* code; a cancelled item), its chain did not end (loop,
 * too many redirects, a failed request, a timeout), it took more redirects
 * than its max_redirects (chain_too_long), it missed its expected final URL, it ended in a
 * 4xx/5xx, or any other warning of it is a problem (an https -> http
 * downgrade): the rule a single trace's exit status follows too. Then, with
 * details, what the final page tells search engines (src/shared/search-verdict.ts):
 * noindex, a soft 404 or a deep URL sent to the home page (unless expected)
 * fail it too. The first of these that holds is its reason.
 */
export function traceVerdict(item: TraceRedirectsBatchResponse): BatchVerdict {
  const { outcome } = item;
  if (outcome.case === "error") return fail(outcome.value.refusalCode ?? outcome.value.code, `not traced: ${outcome.value.message}`);
  if (outcome.case !== "result") return fail("internal", "not traced: no result");
  const trace = outcome.value;
  if (!NORMAL_CHAINS.has(trace.chainStatus)) {
    // The walk's reason for stopping early is its last warning.
    const stop = trace.warnings.at(-1);
    const words = chainWords(trace.chainStatus);
    return fail(stop?.code ?? words.replaceAll(" ", "_"), stop === undefined ? words : `${words}: ${stop.message}`);
  }
  const limit = item.maxRedirects;
  if (limit !== undefined && trace.redirects > limit)
    return fail("chain_too_long", `${trace.redirects} redirects, more than the ${limit} allowed`);
  if (item.expectation !== undefined && !item.expectation.matches)
    return fail("expectation_not_met", `expectation not met: ${item.expectation.reason ?? "no reason given"}`);
  const status = trace.finalStatus;
  if (status !== undefined && status >= 400)
    return fail("final_status_error", `the final URL answers ${answerWords(status, trace.chain.at(-1)?.statusText)}`);
  const problem = trace.warnings.find((warning) => warning.severity === WarningSeverity.PROBLEM);
  if (problem !== undefined) return fail(problem.code, problem.message);
  const matched = item.expectation?.matches === true;
  const search = failingSearchWarning(trace.warnings, matched);
  if (search !== undefined) return fail(search.code, search.message);
  return { verdict: "PASS", code: "", reason: joined(matched ? "ends at the expected final URL" : "", searchNotes(trace.warnings)) };
}

/**
 * A checked item fails when it has no result, the site is down, it is up
 * with a 4xx answer (the contract calls a 404 up; an audit still has to look
 * at it), or a warning of its evidence (details.warnings) is a problem (a
 * revoked certificate), as `sitediag check`'s exit status.
 */
export function checkVerdict(item: CheckSitesResponse): BatchVerdict {
  const { outcome } = item;
  if (outcome.case === "error") return fail(outcome.value.refusalCode ?? outcome.value.code, `not checked: ${outcome.value.message}`);
  if (outcome.case !== "result") return fail("internal", "not checked: no result");
  const check = outcome.value;
  if (check.status !== SiteStatus.UP) return fail(check.details?.code ?? "site_down", `down: ${check.reason ?? "no reason given"}`);
  const status = check.statusCode;
  if (status !== undefined && status >= 400)
    return fail("final_status_error", `up, but the final URL answers ${answerWords(status, check.statusText)}`);
  const problem = check.details?.warnings.find((warning) => warning.severity === WarningSeverity.PROBLEM);
  if (problem !== undefined) return fail(problem.code, problem.message);
  const search = failingSearchWarning(check.details?.warnings ?? [], false);
  if (search !== undefined) return fail(search.code, search.message);
  return { verdict: "PASS", code: "", reason: searchNotes(check.details?.warnings ?? []) };
}

function joined(...parts: readonly string[]): string {
  return parts.filter((part) => part !== "").join("; ");
}

function fail(code: string, reason: string): BatchVerdict {
  return { verdict: "FAIL", code, reason };
}

function chainWords(status: ChainStatus): string {
  return (ChainStatus[status] ?? "unknown").toLowerCase().replaceAll("_", " ");
}

function answerWords(status: number, text: string | undefined): string {
  return text === undefined || text === "" ? String(status) : `${status} ${text}`;
}

/** One row of a batch as every report of it has it (strings, so a table and a CSV cell read the same). */
export interface BatchRecord {
  /** From 0, the row's place in the batch (the CSV and every table count from 1). */
  readonly index: number;
  readonly url: string;
  readonly expectedFinalUrl: string;
  /** The row's own chain-length limit (its max_redirects), "" when it has none. */
  readonly maxRedirects: string;
  readonly verdict: BatchVerdictWord;
  readonly code: string;
  readonly reason: string;
  readonly finalStatus: string;
  readonly finalUrl: string;
  /** The number of requests that answered (every hop of the chain). */
  readonly hops: string;
  /** Each answer in order, `301 http://a/ > 200 https://a/`. */
  readonly chain: string;
}

export function traceRecord(item: TraceRedirectsBatchResponse, expectedFinalUrl: string | undefined, maxRedirects?: number): BatchRecord {
  const verdict = traceVerdict(item);
  const trace = item.outcome.case === "result" ? item.outcome.value : undefined;
  return {
    index: item.index,
    url: item.url,
    expectedFinalUrl: expectedFinalUrl ?? "",
    maxRedirects: maxRedirects === undefined ? "" : String(maxRedirects),
    ...verdict,
    finalStatus: trace?.finalStatus === undefined ? "" : String(trace.finalStatus),
    finalUrl: trace?.finalUrl ?? "",
    hops: trace === undefined ? "" : String(trace.chain.length),
    chain: trace === undefined ? "" : trace.chain.map((hop) => `${hop.status} ${hop.url}`).join(" > "),
  };
}

export function checkRecord(item: CheckSitesResponse): BatchRecord {
  const verdict = checkVerdict(item);
  const check = item.outcome.case === "result" ? item.outcome.value : undefined;
  const answers = check === undefined ? [] : check.redirectHops.map((hop) => `${hop.status} ${hop.url}`);
  if (check?.statusCode !== undefined) answers.push(`${check.statusCode} ${check.finalUrl ?? check.requestedUrl}`);
  return {
    index: item.index,
    url: item.url,
    expectedFinalUrl: "",
    maxRedirects: "",
    ...verdict,
    finalStatus: check?.statusCode === undefined ? "" : String(check.statusCode),
    finalUrl: check?.finalUrl ?? "",
    hops: check === undefined ? "" : String(answers.length),
    chain: answers.join(" > "),
  };
}

/** A row whose item never ran: the batch was refused as a whole, or stopped before it. */
export function notRunRecord(
  index: number,
  url: string,
  expectedFinalUrl: string | undefined,
  reason: string,
  maxRedirects?: number,
): BatchRecord {
  return {
    index,
    url,
    expectedFinalUrl: expectedFinalUrl ?? "",
    maxRedirects: maxRedirects === undefined ? "" : String(maxRedirects),
    verdict: "NOT RUN",
    code: "not_run",
    reason,
    finalStatus: "",
    finalUrl: "",
    hops: "",
    chain: "",
  };
}

/** A refusal of the row's URL itself (input_invalid_url, input_non_public_address, ...): running it again as it is cannot change it. */
export function refusedAtInput(code: string): boolean {
  return code.startsWith("input_");
}

/**
 * How many rows failed for each code, most first (then by code), for a
 * summary: `8 final_status_error, 4 expectation_not_met`. Rows not run are
 * counted apart, not here.
 */
export function failureCounts(
  records: readonly Pick<BatchRecord, "verdict" | "code">[],
): readonly { readonly code: string; readonly count: number }[] {
  const counts = new Map<string, number>();
  for (const record of records) if (record.verdict === "FAIL") counts.set(record.code, (counts.get(record.code) ?? 0) + 1);
  return [...counts]
    .map(([code, count]) => ({ code, count }))
    .sort((a, b) => b.count - a.count || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
}

/** failureCounts in words: "8 final_status_error, 4 expectation_not_met"; "" when none failed. */
export function failureCountText(records: readonly Pick<BatchRecord, "verdict" | "code">[]): string {
  return failureCounts(records)
    .map(({ code, count }) => `${count} ${code}`)
    .join(", ");
}

const BATCH_CSV_HEADINGS: readonly string[] = [
  "index",
  "url",
  "expected_final_url",
  "max_redirects",
  "verdict",
  "code",
  "reason",
  "final_status",
  "final_url",
  "hops",
  "chain",
];

/** The records as a CSV file (BATCH_CSV_HEADINGS), in the order given; `index` counts from 1, as every table's `#`. */
export function batchCsv(records: readonly BatchRecord[]): string {
  const rows = records.map((r) => [
    String(r.index + 1),
    r.url,
    r.expectedFinalUrl,
    r.maxRedirects,
    r.verdict,
    r.code,
    r.reason,
    r.finalStatus,
    r.finalUrl,
    r.hops,
    r.chain,
  ]);
  return toCsv([BATCH_CSV_HEADINGS, ...rows]);
}

/** A CSV file of rows: fields quoted when needed, and a cell a spreadsheet would run as a formula made inert. */
export function toCsv(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => row.map(csvCell).join(",")).join("\r\n") + "\r\n";
}

function csvCell(value: string): string {
  const inert = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(inert) ? `"${inert.replaceAll('"', '""')}"` : inert;
}
