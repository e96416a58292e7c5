import type { RequestRecord } from "../../diagnostics/diagnostic-details.js";
import type { ChainStatusId, RedirectTraceResult, TraceHop } from "../../diagnostics/redirect-trace.js";
import { hasProblem } from "../../diagnostics/redirect-trace-result.js";
import type { SiteCheckResult } from "../../diagnostics/site-check-result.js";
import { type ProxyVerdict, proxyVerdict } from "../../diagnostics/proxy-verdict.js";
import { chainStatusWording } from "../../service/trace-redirects.js";
import { transportLines } from "./transport-lines.js";
import { familyLines } from "./family-lines.js";
import { addressLines } from "./address-lines.js";
import { tlsVersionLines } from "./tls-version-lines.js";
import { evidenceWarningLines, problemWarnings, SEVERITY_PAINT } from "./evidence-warning-lines.js";
import { revocationLines } from "./revocation-lines.js";
import { registrationLines } from "./registration-lines.js";
import { resolutionLines } from "./resolution-lines.js";
import {
  PHASE_HEADINGS,
  addressCell,
  answerCell,
  certificateLines,
  detailsRows,
  headRow,
  headsBefore,
  isChainPosition,
  missingPhaseCells,
  phaseCells,
  timeCell,
  urlCell,
} from "./request-lines.js";
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
  const gate = siteProxy(result)?.gate ?? null;
  // The third state: it answered, but a proxy's challenge or block stood in the way (the API still says "up").
  // An up site with a problem in its evidence (a revoked certificate) is not shown as good: the count follows the word, as a trace's does.
  const problems = result.status === "up" ? problemWarnings(result.details?.warnings ?? []).length : 0;
  const word = gate !== null ? gate.toUpperCase() : result.status === "up" ? "UP" : "DOWN";
  const headline = problems === 0 ? word : `${word}, ${problems} problem${problems === 1 ? "" : "s"}`;
  const tone = problems > 0 ? paint.bad : gate !== null ? paint.warn : result.status === "up" ? paint.good : paint.bad;
  const verdict = tone(paint.strong(headline));
  const requests = result.details?.requests ?? [];
  return `${verdict}  ${result.requestedUrl}\n${siteSummary(result, paint)}\n${requestTable(requests, paint)}${certificateLines(requests, "request", paint)}${revocationLines(requests, "request", paint)}${transportLines(requests, "request", paint)}${resolutionLines(result.details, requests, "request", paint)}${registrationLines(result.details, paint)}${familyLines(result.details, requests[0], true, paint)}${addressLines(result.details, paint)}${tlsVersionLines(result.details, paint)}${evidenceWarningLines(result.details?.warnings ?? [], paint)}`;
}

/** A check the CLI exits 0 for: up, and no warning of severity problem in its evidence (a revoked certificate), the rule a batch row follows too. */
export function checkIsHealthy(result: SiteCheckResult): boolean {
  return result.status === "up" && problemWarnings(result.details?.warnings ?? []).length === 0;
}

function siteSummary(result: SiteCheckResult, paint: Paint): string {
  const rows: string[][] = [["answer", siteAnswer(result, paint)]];
  if (result.reason !== null) rows.push(["reason", paint.bad(result.reason)]);
  if (result.status === "up")
    for (const problem of problemWarnings(result.details?.warnings ?? [])) rows.push(["problem", paint.bad(problem.message)]);
  if (result.failedStage !== null) rows.push(["failed stage", result.failedStage]);
  if (result.finalUrl !== null) rows.push(["final URL", result.finalUrl]);
  if (result.redirectHops !== null) rows.push(["redirects", String(result.redirectHops.length)]);
  rows.push(["response time", timeCell(result.responseTime, result.details)]);
  const proxy = siteProxy(result);
  if (proxy !== null) rows.push(["proxy", proxyPainted(proxy, result.statusCode ?? 0, paint)]);
  // Without details only the contract's provider name is known: say what happened, claim nothing more.
  else if (result.proxyBlocked)
    rows.push(["proxy", `${result.proxyProvider ?? "a proxy or CDN"} answered ${result.statusCode ?? "with an error"}`]);
  rows.push(...detailsRows(result.details, paint));
  return textTable(rows.map(([label = "", value = ""]) => [paint.dim(label), value]));
}

/** What the proxy that gave the final answer means, when the check saw one. */
function siteProxy(result: SiteCheckResult): ProxyVerdict | null {
  const proxy = result.details?.proxy ?? null;
  if (proxy === null || result.statusCode === null) return null;
  return proxyVerdict(proxy.provider, proxy.kind, result.statusCode);
}

function proxyPainted(proxy: ProxyVerdict, status: number, paint: Paint): string {
  if (proxy.gate !== null) return paint.warn(proxy.sentence);
  return status >= 500 ? paint.bad(proxy.sentence) : proxy.sentence;
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

/** The chain statuses the contract calls normal (spec §2.3 rule 1). */
const HEALTHY_CHAINS: ReadonlySet<ChainStatusId> = new Set(["healthy", "redirects_detected"]);

/** A trace the CLI exits 0 for: a normal chain status and no warning of severity problem (an https -> http downgrade, a final 4xx/5xx). */
export function traceIsHealthy(result: RedirectTraceResult): boolean {
  return HEALTHY_CHAINS.has(result.chainStatus) && !hasProblem(result.warnings);
}

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
  const wording = chainStatusWording(result.chainStatus);
  // A normal chain status with a problem on the way is not shown as good: the count follows the contract's words.
  const problems = HEALTHY_CHAINS.has(result.chainStatus) ? result.warnings.filter((warning) => warning.severity === "problem").length : 0;
  const headline = problems === 0 ? wording : `${wording}, ${problems} problem${problems === 1 ? "" : "s"}`;
  const verdict = paint.strong(traceIsHealthy(result) ? paint.good(headline) : paint.bad(headline));
  return `${verdict}  ${result.input}\n${traceSummary(result, paint)}\n${hopTable(result.chain, positions, paint, headsBefore(result.details?.requests ?? []))}${certificateLines(positions, "hop", paint)}${revocationLines(positions, "hop", paint)}${transportLines(positions, "hop", paint)}${resolutionLines(result.details, positions, "hop", paint)}${registrationLines(result.details, paint)}${familyLines(result.details, positions[0], false, paint)}${addressLines(result.details, paint)}${tlsVersionLines(result.details, paint)}${warningLines(result, paint)}`;
}

function traceSummary(result: RedirectTraceResult, paint: Paint): string {
  const rows: string[][] = [];
  // The walk's reason for stopping early is always the last warning (redirect-trace.ts).
  const stopReason = HEALTHY_CHAINS.has(result.chainStatus) ? undefined : result.warnings.at(-1);
  if (stopReason !== undefined) rows.push(["reason", paint.bad(stopReason.message)]);
  const final =
    result.finalStatus === null ? paint.dim(" (no final response)") : ` (${paint.status(result.finalStatus, String(result.finalStatus))})`;
  rows.push(["final URL", `${result.finalUrl}${final}`]);
  rows.push(["redirects", String(result.redirects)]);
  rows.push(["total time", timeCell(result.totalTimeMs, result.details)]);
  const proxy = result.details?.proxy ?? null;
  // details.proxy is read off the last response the walk got, the chain's last hop.
  const lastStatus = result.chain.at(-1)?.status;
  if (proxy !== null && lastStatus !== undefined)
    rows.push(["proxy", proxyPainted(proxyVerdict(proxy.provider, proxy.kind, lastStatus), lastStatus, paint)]);
  rows.push(...detailsRows(result.details, paint));
  return textTable(rows.map(([label = "", value = ""]) => [paint.dim(label), value]));
}

function hopTable(
  chain: readonly TraceHop[],
  positions: readonly RequestRecord[],
  paint: Paint,
  heads: ReadonlyMap<number, RequestRecord>,
): string {
  const heading = ["hop", "status", "method", "address", ...PHASE_HEADINGS, "url"].map(paint.dim);
  const answered = chain.flatMap((hop, index) => {
    const request = positions[index];
    const status = paint.status(hop.status, `${hop.status} ${hop.statusText}`);
    const upgrade = hop.upgradedToHttps ? "(upgrade to HTTPS)" : "";
    const phases = request === undefined ? missingPhaseCells(`${hop.responseTimeMs} ms`) : phaseCells(request);
    const head = heads.get(index);
    const row = [
      String(hop.hop),
      status,
      request?.method ?? "-",
      request === undefined ? "-" : addressCell(request),
      ...phases,
      urlCell(hop.url, hop.location, paint, upgrade),
    ];
    return head === undefined ? [row] : [headRow(hop.hop, head, paint), row];
  });
  const unanswered = positions.slice(chain.length).flatMap((request, index) => {
    const head = heads.get(chain.length + index);
    const row = [
      paint.dim(String(chain.length + index + 1)),
      answerCell(request, paint),
      request.method,
      addressCell(request),
      ...phaseCells(request),
      request.url,
    ];
    return head === undefined ? [row] : [headRow(chain.length + index + 1, head, paint), row];
  });
  return textTable([heading, ...answered, ...unanswered]);
}

function warningLines(result: RedirectTraceResult, paint: Paint): string {
  if (result.warnings.length === 0) return "";
  const rows = result.warnings.map((warning) => [
    SEVERITY_PAINT[warning.severity](paint)(warning.severity),
    warning.hop === null ? "chain" : `hop ${warning.hop}`,
    paint.dim(warning.code),
    warning.message,
  ]);
  return `\n${paint.dim("warnings")}\n${textTable(rows)}`;
}
