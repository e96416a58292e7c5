import type { ChainStatusId, RedirectTraceResult, TraceHop } from "../../diagnostics/redirect-trace.js";
import { chainStatusWording } from "../../service/trace-redirects.js";
import { certificateLines, detailsRows } from "./details-lines.js";
import { addressCell, answerCell, tlsLines, urlCell } from "./hop-cells.js";
import type { RequestAttempt } from "../../diagnostics/request-attempt.js";
import type { Paint } from "./paint.js";
import { textTable } from "./text-table.js";
import { PHASE_HEADINGS, phaseCells } from "./timings.js";

/** The chain statuses the contract calls normal (spec §2.3 rule 1); the CLI exits 0 for these. */
export const HEALTHY_CHAINS: ReadonlySet<ChainStatusId> = new Set(["healthy", "redirects_detected"]);

/**
 * `sitediag trace` for people: the chain status and totals, then one row per
 * position of the chain with an arrow to where it redirects, then the
 * warnings. The trace's `attempts` are its requests per chain position; a
 * position past the end of `chain` is the request that failed or was
 * refused, which the contract's chain has no hop object for.
 */
export function renderTrace(result: RedirectTraceResult, paint: Paint): string {
  const positions = result.attempts;
  const healthy = HEALTHY_CHAINS.has(result.chainStatus);
  const wording = chainStatusWording(result.chainStatus);
  const verdict = paint.strong(healthy ? paint.good(wording) : paint.bad(wording));
  return `${verdict}  ${result.input}\n${summary(result, paint)}\n${hopTable(result.chain, positions, paint)}${tlsLines(tlsRequests(positions), paint)}${certificateLines(result.details, paint)}${warnings(result, paint)}`;
}

function summary(result: RedirectTraceResult, paint: Paint): string {
  const rows: string[][] = [];
  // The walk's reason for stopping early is always the last warning (redirect-trace.ts).
  const stopReason = HEALTHY_CHAINS.has(result.chainStatus) ? undefined : result.warnings.at(-1);
  if (stopReason !== undefined) rows.push(["reason", paint.bad(stopReason.message)]);
  const final = result.finalStatus === null ? paint.dim(" (no final response)") : ` (${paint.status(result.finalStatus, String(result.finalStatus))})`;
  rows.push(["final URL", `${result.finalUrl}${final}`]);
  rows.push(["redirects", String(result.redirects)]);
  rows.push(["total time", `${result.totalTimeMs} ms`]);
  rows.push(...detailsRows(result.details, paint));
  return textTable(rows.map(([label = "", value = ""]) => [paint.dim(label), value]));
}

function hopTable(chain: readonly TraceHop[], positions: readonly RequestAttempt[], paint: Paint): string {
  const heading = ["hop", "status", "method", "address", ...PHASE_HEADINGS, "url"].map(paint.dim);
  const answered = chain.map((hop, index) => {
    const request = positions[index];
    const status = paint.status(hop.status, `${hop.status} ${hop.statusText}`);
    const upgrade = hop.upgradedToHttps ? "(upgrade to HTTPS)" : "";
    const phases = request === undefined ? ["-", "-", "-", "-", `${hop.responseTimeMs} ms`] : phaseCells(request.outcome);
    return [String(hop.hop), status, request?.method ?? "-", request === undefined ? "-" : addressCell(request.outcome), ...phases, urlCell(hop.url, hop.location, paint, upgrade)];
  });
  const unanswered = positions.slice(chain.length).map((request, index) => [
    paint.dim(String(chain.length + index + 1)),
    answerCell(request.outcome, paint),
    request.method,
    addressCell(request.outcome),
    ...phaseCells(request.outcome),
    request.url,
  ]);
  return textTable([heading, ...answered, ...unanswered]);
}

function tlsRequests(positions: readonly RequestAttempt[]) {
  return positions.map((request, index) => ({ label: `hop ${index + 1}`, outcome: request.outcome }));
}

function warnings(result: RedirectTraceResult, paint: Paint): string {
  if (result.warnings.length === 0) return "";
  const rows = result.warnings.map((warning) => [paint.warn("!"), warning.hop === null ? "chain" : `hop ${warning.hop}`, paint.dim(warning.code), warning.message]);
  return `\n${paint.dim("warnings")}\n${textTable(rows)}`;
}
