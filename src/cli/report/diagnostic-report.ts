import { ChainStatus, type TraceRedirectsBatchResponse } from "../../../gen/sitediag/v1/diagnostics_pb.js";
import type { RequestRecord } from "../../diagnostics/diagnostic-details.js";
import type { ChainStatusId, RedirectTraceResult, TraceHop } from "../../diagnostics/redirect-trace.js";
import type { SiteCheckResult } from "../../diagnostics/site-check-result.js";
import { chainStatusWording } from "../../service/trace-redirects.js";
import { PHASE_HEADINGS, addressCell, answerCell, certificateLines, detailsRows, headRow, headsBefore, isChainPosition, missingPhaseCells, phaseCells, timeCell, urlCell } from "./request-lines.js";
import { type Paint, textTable } from "./terminal-text.js";

// The reports `sitediag check` and `sitediag trace` print for people. Their
// request tables render the diagnostic's `details.requests` (asked with a
// report), the same list the API answers with.

/**
 * `sitediag check` for people: the verdict and the contract's fields first,
 * then every request the check made with its timings per phase.
 *
 *   UP  http://example.test/old
 *     answer         200 OK
 *     ...
 *
 *     #  answer                 address    dns  connect  tls  first byte  total  url
 *     1  301 Moved Permanently  192.0.2.1  ...                                    http://example.test/old → http://example.test/new
 */
export function renderSiteCheck(result: SiteCheckResult, paint: Paint): string {
  const verdict = result.status === "up" ? paint.good(paint.strong("UP")) : paint.bad(paint.strong("DOWN"));
  const requests = result.details?.requests ?? [];
  return `${verdict}  ${result.requestedUrl}\n${siteSummary(result, paint)}\n${requestTable(requests, paint)}${certificateLines(requests, "request", paint)}`;
}

function siteSummary(result: SiteCheckResult, paint: Paint): string {
  const rows: string[][] = [["answer", siteAnswer(result, paint)]];
  if (result.reason !== null) rows.push(["reason", paint.bad(result.reason)]);
  if (result.failedStage !== null) rows.push(["failed stage", result.failedStage]);
  if (result.finalUrl !== null) rows.push(["final URL", result.finalUrl]);
  if (result.redirectHops !== null) rows.push(["redirects", String(result.redirectHops.length)]);
  rows.push(["response time", timeCell(result.responseTime, result.details)]);
  if (result.proxyBlocked) {
    const provider = result.proxyProvider === null ? "" : ` (${result.proxyProvider})`;
    rows.push(["proxy", paint.warn(`a proxy${provider} answered with an error: it may be a challenge or a restriction, not an outage`)]);
  }
  rows.push(...detailsRows(result.details, paint));
  return textTable(rows.map(([label = "", value = ""]) => [paint.dim(label), value]));
}

function siteAnswer(result: SiteCheckResult, paint: Paint): string {
  if (result.statusCode === null) return paint.dim("no response");
  return paint.status(result.statusCode, `${result.statusCode} ${result.statusText ?? ""}`.trimEnd());
}

function requestTable(requests: readonly RequestRecord[], paint: Paint): string {
  const heading = ["#", "answer", "address", ...PHASE_HEADINGS, "url"].map(paint.dim);
  const rows = requests.map((request, index) => [
    String(index + 1),
    answerCell(request, paint),
    addressCell(request),
    ...phaseCells(request),
    urlCell(request.url, request.report?.location ?? null, paint),
  ]);
  return textTable([heading, ...rows]);
}

/** The chain statuses the contract calls normal (spec §2.3 rule 1); the CLI exits 0 for these. */
export const HEALTHY_CHAINS: ReadonlySet<ChainStatusId> = new Set(["healthy", "redirects_detected"]);

/**
 * `sitediag trace` for people: the chain status and totals, then one row per
 * position of the chain with an arrow to where it redirects, then the
 * warnings. A position is a request of `details` (all but the extra GET of
 * the final page); one past the end of `chain` is the request that failed,
 * or the position the trace stopped at (refused, out of budget), which the
 * contract's chain has no hop object for.
 */
export function renderTrace(result: RedirectTraceResult, paint: Paint): string {
  const positions = (result.details?.requests ?? []).filter(isChainPosition);
  const healthy = HEALTHY_CHAINS.has(result.chainStatus);
  const wording = chainStatusWording(result.chainStatus);
  const verdict = paint.strong(healthy ? paint.good(wording) : paint.bad(wording));
  return `${verdict}  ${result.input}\n${traceSummary(result, paint)}\n${hopTable(result.chain, positions, paint, headsBefore(result.details?.requests ?? []))}${certificateLines(positions, "hop", paint)}${warningLines(result, paint)}`;
}

function traceSummary(result: RedirectTraceResult, paint: Paint): string {
  const rows: string[][] = [];
  // The walk's reason for stopping early is always the last warning (redirect-trace.ts).
  const stopReason = HEALTHY_CHAINS.has(result.chainStatus) ? undefined : result.warnings.at(-1);
  if (stopReason !== undefined) rows.push(["reason", paint.bad(stopReason.message)]);
  const final = result.finalStatus === null ? paint.dim(" (no final response)") : ` (${paint.status(result.finalStatus, String(result.finalStatus))})`;
  rows.push(["final URL", `${result.finalUrl}${final}`]);
  rows.push(["redirects", String(result.redirects)]);
  rows.push(["total time", timeCell(result.totalTimeMs, result.details)]);
  rows.push(...detailsRows(result.details, paint));
  return textTable(rows.map(([label = "", value = ""]) => [paint.dim(label), value]));
}

function hopTable(chain: readonly TraceHop[], positions: readonly RequestRecord[], paint: Paint, heads: ReadonlyMap<number, RequestRecord>): string {
  const heading = ["hop", "status", "method", "address", ...PHASE_HEADINGS, "url"].map(paint.dim);
  const answered = chain.flatMap((hop, index) => {
    const request = positions[index];
    const status = paint.status(hop.status, `${hop.status} ${hop.statusText}`);
    const upgrade = hop.upgradedToHttps ? "(upgrade to HTTPS)" : "";
    const phases = request === undefined ? missingPhaseCells(`${hop.responseTimeMs} ms`) : phaseCells(request);
    const head = heads.get(index);
    const row = [String(hop.hop), status, request?.method ?? "-", request === undefined ? "-" : addressCell(request), ...phases, urlCell(hop.url, hop.location, paint, upgrade)];
    return head === undefined ? [row] : [headRow(hop.hop, head, paint), row];
  });
  const unanswered = positions.slice(chain.length).flatMap((request, index) => {
    const head = heads.get(chain.length + index);
    const row = [paint.dim(String(chain.length + index + 1)), answerCell(request, paint), request.method, addressCell(request), ...phaseCells(request), request.url];
    return head === undefined ? [row] : [headRow(chain.length + index + 1, head, paint), row];
  });
  return textTable([heading, ...answered, ...unanswered]);
}

function warningLines(result: RedirectTraceResult, paint: Paint): string {
  if (result.warnings.length === 0) return "";
  const rows = result.warnings.map((warning) => [paint.warn("!"), warning.hop === null ? "chain" : `hop ${warning.hop}`, paint.dim(warning.code), warning.message]);
  return `\n${paint.dim("warnings")}\n${textTable(rows)}`;
}

/** HEALTHY_CHAINS as the answer's enum, which a batch item carries. */
const HEALTHY_STATUSES: ReadonlySet<ChainStatus> = new Set([ChainStatus.HEALTHY, ChainStatus.REDIRECTS_DETECTED]);

/** An item the audit must flag: its expectation failed, it has no result, or (with no expectation) its chain is broken. */
export function itemFailed(item: TraceRedirectsBatchResponse): boolean {
  if (item.outcome.case !== "result") return true;
  if (item.expectation !== undefined) return !item.expectation.matches;
  return !HEALTHY_STATUSES.has(item.outcome.value.chainStatus);
}

/** `sitediag trace --batch` for people: one row per input row, in file order, then the counts. */
export function renderBatchSummary(items: readonly TraceRedirectsBatchResponse[], paint: Paint): string {
  const sorted = [...items].sort((a, b) => a.index - b.index);
  const rows = [["#", "RESULT", "FINAL", "EXPECTATION", "URL"].map((heading) => paint.dim(heading))];
  for (const item of sorted) rows.push(batchRow(item, paint));
  const failed = sorted.filter(itemFailed).length;
  const expected = sorted.filter((item) => item.expectation !== undefined);
  const met = expected.filter((item) => item.expectation?.matches === true).length;
  const errors = sorted.filter((item) => item.outcome.case === "error").length;
  const counts = `${sorted.length} traced, ${expected.length} with an expectation: ${met} met, ${expected.length - met} not met; ${errors} could not be traced`;
  const verdict = failed === 0 ? paint.good("all as expected") : paint.bad(`${failed} to look at`);
  return `${textTable(rows, "")}\n${paint.strong(verdict)}  ${counts}\n`;
}

function batchRow(item: TraceRedirectsBatchResponse, paint: Paint): string[] {
  const position = String(item.index + 1);
  if (item.outcome.case !== "result") {
    const error = item.outcome.case === "error" ? item.outcome.value : undefined;
    return [position, paint.bad(error?.code ?? "no result"), "-", paint.bad(error?.message ?? ""), item.url];
  }
  const trace = item.outcome.value;
  const chain = chainLabel(trace.chainStatus);
  const final = trace.finalStatus === undefined ? "-" : `${trace.finalStatus} ${trace.finalUrl}`;
  const expectation =
    item.expectation === undefined ? paint.dim("-") : item.expectation.matches ? paint.good("met") : paint.bad(`not met: ${item.expectation.reason ?? ""}`);
  return [position, HEALTHY_STATUSES.has(trace.chainStatus) ? paint.good(chain) : paint.bad(chain), final, expectation, item.url];
}

function chainLabel(status: ChainStatus): string {
  return (ChainStatus[status] ?? "unknown").toLowerCase().replaceAll("_", " ");
}
