import type { SiteCheckAttempt, SiteCheckResult } from "../../diagnostics/site-check-result.js";
import { certificateLines, detailsRows } from "./details-lines.js";
import { addressCell, answerCell, tlsLines, urlCell } from "./hop-cells.js";
import type { Paint } from "./paint.js";
import { textTable } from "./text-table.js";
import { PHASE_HEADINGS, phaseCells } from "./timings.js";

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
  return `${verdict}  ${result.requestedUrl}\n${summary(result, paint)}\n${requestTable(result.attempts, paint)}${tlsLines(tlsRequests(result.attempts), paint)}${certificateLines(result.details, paint)}`;
}

function summary(result: SiteCheckResult, paint: Paint): string {
  const rows: string[][] = [["answer", answer(result, paint)]];
  if (result.reason !== null) rows.push(["reason", paint.bad(result.reason)]);
  if (result.failedStage !== null) rows.push(["failed stage", result.failedStage]);
  if (result.finalUrl !== null) rows.push(["final URL", result.finalUrl]);
  if (result.redirectHops !== null) rows.push(["redirects", String(result.redirectHops.length)]);
  rows.push(["response time", result.responseTime === null ? "-" : `${result.responseTime} ms`]);
  if (result.proxyBlocked) {
    const provider = result.proxyProvider === null ? "" : ` (${result.proxyProvider})`;
    rows.push(["proxy", paint.warn(`a proxy${provider} answered with an error: it may be a challenge or a restriction, not an outage`)]);
  }
  rows.push(...detailsRows(result.details, paint));
  return textTable(rows.map(([label = "", value = ""]) => [paint.dim(label), value]));
}

function answer(result: SiteCheckResult, paint: Paint): string {
  if (result.statusCode === null) return paint.dim("no response");
  return paint.status(result.statusCode, `${result.statusCode} ${result.statusText ?? ""}`.trimEnd());
}

function requestTable(attempts: readonly SiteCheckAttempt[], paint: Paint): string {
  const heading = ["#", "answer", "address", ...PHASE_HEADINGS, "url"].map(paint.dim);
  const rows = attempts.map((attempt, index) => {
    const location = attempt.outcome.kind === "response" ? attempt.outcome.response.location : null;
    return [String(index + 1), answerCell(attempt.outcome, paint), addressCell(attempt.outcome), ...phaseCells(attempt.outcome), urlCell(attempt.url, location, paint)];
  });
  return textTable([heading, ...rows]);
}

function tlsRequests(attempts: readonly SiteCheckAttempt[]) {
  return attempts.map((attempt, index) => ({ label: `#${index + 1}`, outcome: attempt.outcome }));
}
