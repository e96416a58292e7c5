import { isMessage, type Message } from "@bufbuild/protobuf";
import { CheckSitesRequestSchema, DiagnosticsService, TraceRedirectsBatchRequestSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { batchSizeProblem } from "../batch.js";
import { REDIRECT_TRACE, SITE_CHECK } from "../limits.js";

/**
 * What a call costs, or why it has no price (a batch outside the size rule is
 * refused before any charge). `units`: the diagnostics it pays for (a batch's
 * items; 1 for a single call), each `credits / units`.
 */
export type Price = { readonly kind: "credits"; readonly credits: number; readonly units: number } | { readonly kind: "unpriced"; readonly reason: string };

/** Credits per unit of each DiagnosticsService method (§8); a batch pays its unit for every item. Data, not literals in handlers. */
const UNIT_COSTS: ReadonlyMap<string, number> = new Map([
  [DiagnosticsService.method.checkSite.name, SITE_CHECK.creditCost],
  [DiagnosticsService.method.traceRedirects.name, REDIRECT_TRACE.creditCost],
  [DiagnosticsService.method.checkSites.name, SITE_CHECK.creditCost],
  [DiagnosticsService.method.traceRedirectsBatch.name, REDIRECT_TRACE.creditCost],
]);

/** The price of a call, or undefined for a method that has none (which must never run unmetered). */
export function priceOf(methodName: string, message: Message): Price | undefined {
  const unit = UNIT_COSTS.get(methodName);
  if (unit === undefined) return undefined;
  const items = batchSize(message);
  if (items === undefined) return { kind: "credits", credits: unit, units: 1 };
  const problem = batchSizeProblem(items);
  return problem === undefined ? { kind: "credits", credits: unit * items, units: items } : { kind: "unpriced", reason: problem };
}

/** The number of items of a batch request; undefined for a single-URL request. */
function batchSize(message: Message): number | undefined {
  if (isMessage(message, CheckSitesRequestSchema)) return message.urls.length;
  if (isMessage(message, TraceRedirectsBatchRequestSchema)) return message.items.length;
  return undefined;
}
