import { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { REDIRECT_TRACE, SITE_CHECK } from "../limits.js";

/** Credits each DiagnosticsService method costs, by method name (§8); data, not literals in handlers. */
const COSTS: ReadonlyMap<string, number> = new Map([
  [DiagnosticsService.method.checkSite.name, SITE_CHECK.creditCost],
  [DiagnosticsService.method.traceRedirects.name, REDIRECT_TRACE.creditCost],
]);

/** The cost of a method, or undefined for a method that has none (which must never run unmetered). */
export function creditCostOf(methodName: string): number | undefined {
  return COSTS.get(methodName);
}
