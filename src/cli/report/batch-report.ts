import { ChainStatus, type TraceRedirectsBatchResponse } from "../../../gen/sitediag/v1/diagnostics_pb.js";
import type { Paint } from "./paint.js";
import { textTable } from "./text-table.js";

const HEALTHY = new Set([ChainStatus.HEALTHY, ChainStatus.REDIRECTS_DETECTED]);

/** An item the audit must flag: its expectation failed, it has no result, or (with no expectation) its chain is broken. */
export function itemFailed(item: TraceRedirectsBatchResponse): boolean {
  if (item.outcome.case !== "result") return true;
  if (item.expectation !== undefined) return !item.expectation.matches;
  return !HEALTHY.has(item.outcome.value.chainStatus);
}

/** `sitediag trace --batch` for people: one row per input row, in file order, then the counts. */
export function renderBatchSummary(items: readonly TraceRedirectsBatchResponse[], paint: Paint): string {
  const sorted = [...items].sort((a, b) => a.index - b.index);
  const rows = [["#", "RESULT", "FINAL", "EXPECTATION", "URL"].map((heading) => paint.dim(heading))];
  for (const item of sorted) rows.push(row(item, paint));
  const failed = sorted.filter(itemFailed).length;
  const expected = sorted.filter((item) => item.expectation !== undefined);
  const met = expected.filter((item) => item.expectation?.matches === true).length;
  const errors = sorted.filter((item) => item.outcome.case === "error").length;
  const counts = `${sorted.length} traced, ${expected.length} with an expectation: ${met} met, ${expected.length - met} not met; ${errors} could not be traced`;
  const verdict = failed === 0 ? paint.good("all as expected") : paint.bad(`${failed} to look at`);
  return `${textTable(rows, "")}\n${paint.strong(verdict)}  ${counts}\n`;
}

function row(item: TraceRedirectsBatchResponse, paint: Paint): string[] {
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
  return [position, HEALTHY.has(trace.chainStatus) ? paint.good(chain) : paint.bad(chain), final, expectation, item.url];
}

function chainLabel(status: ChainStatus): string {
  return (ChainStatus[status] ?? "unknown").toLowerCase().replaceAll("_", " ");
}
