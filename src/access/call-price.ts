import { isMessage, type Message } from "@bufbuild/protobuf";
import { createContextKey } from "@connectrpc/connect";
import {
  CheckSiteRequestSchema,
  CheckSitesRequestSchema,
  DiagnosticsService,
  TraceRedirectsBatchRequestSchema,
  TraceRedirectsRequestSchema,
  VantageCheckSiteRequestSchema,
  VantageTraceRedirectsRequestSchema,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import { batchSizeProblem } from "../shared/batch.js";
import { REDIRECT_TRACE, SITE_CHECK } from "../shared/limits.js";
import { readVantageList } from "../shared/vantage-list.js";
import { userAgentCause } from "../shared/failures.js";
import { isKnownUserAgent } from "../shared/user-agent-option.js";

/**
 * What a call costs, or why it has no price (a batch outside the size rule is
 * refused before any charge). `units`: the diagnostics it pays for (a batch's
 * items; 1 for a single call), each `credits / units`.
 */
export type Price =
  | { readonly kind: "credits"; readonly credits: number; readonly units: number }
  | { readonly kind: "unpriced"; readonly reason: string };

/** Credits per unit of each DiagnosticsService method (§8); a batch pays its unit for every item. Data, not literals in handlers. */
const UNIT_COSTS: ReadonlyMap<string, number> = new Map([
  [DiagnosticsService.method.checkSite.name, SITE_CHECK.creditCost],
  [DiagnosticsService.method.traceRedirects.name, REDIRECT_TRACE.creditCost],
  [DiagnosticsService.method.checkSites.name, SITE_CHECK.creditCost],
  [DiagnosticsService.method.traceRedirectsBatch.name, REDIRECT_TRACE.creditCost],
  [DiagnosticsService.method.vantageCheckSite.name, SITE_CHECK.creditCost],
  [DiagnosticsService.method.vantageTraceRedirects.name, REDIRECT_TRACE.creditCost],
]);

/**
 * The price of a call, or undefined for a method that has none (which must
 * never run unmetered). A call from several vantages pays its unit for every
 * vantage named; `all` must have been resolved to names before (the vantage
 * planner does it), as its price is the number of live vantages.
 */
export function priceOf(methodName: string, message: Message): Price | undefined {
  const unit = UNIT_COSTS.get(methodName);
  if (unit === undefined) return undefined;
  // A User-Agent the service cannot speak as makes no diagnostic to pay for.
  const userAgent = userAgentOf(message);
  if (userAgent !== undefined && !isKnownUserAgent(userAgent)) return { kind: "unpriced", reason: userAgentCause().reason };
  const vantages = vantagesOf(message);
  if (vantages !== undefined) {
    const list = readVantageList(vantages);
    if (list.kind === "problem") return { kind: "unpriced", reason: list.problem.reason };
    if (list.kind !== "names") return undefined;
    return { kind: "credits", credits: unit * list.names.length, units: list.names.length };
  }
  const items = batchSize(message);
  if (items === undefined) return { kind: "credits", credits: unit, units: 1 };
  const problem = batchSizeProblem(items);
  return problem === undefined ? { kind: "credits", credits: unit * items, units: items } : { kind: "unpriced", reason: problem };
}

/**
 * The vantages a request names: undefined for a call from this server alone.
 * The streaming vantage methods must name some; without any they have no price.
 */
function vantagesOf(message: Message): readonly string[] | undefined {
  if (isMessage(message, CheckSiteRequestSchema) || isMessage(message, TraceRedirectsRequestSchema))
    return message.vantages.length > 0 ? message.vantages : undefined;
  if (isMessage(message, VantageCheckSiteRequestSchema) || isMessage(message, VantageTraceRedirectsRequestSchema))
    return message.vantages.length > 0 ? message.vantages : [""];
  return undefined;
}

/** The user_agent a request names; undefined for a message without one. */
function userAgentOf(message: Message): number | undefined {
  if (
    isMessage(message, CheckSiteRequestSchema) ||
    isMessage(message, TraceRedirectsRequestSchema) ||
    isMessage(message, VantageCheckSiteRequestSchema) ||
    isMessage(message, VantageTraceRedirectsRequestSchema) ||
    isMessage(message, CheckSitesRequestSchema) ||
    isMessage(message, TraceRedirectsBatchRequestSchema)
  ) {
    return message.userAgent;
  }
  return undefined;
}

/** The number of items of a batch request; undefined for a single-URL request. */
function batchSize(message: Message): number | undefined {
  if (isMessage(message, CheckSitesRequestSchema)) return message.urls.length;
  if (isMessage(message, TraceRedirectsBatchRequestSchema)) return message.items.length;
  return undefined;
}

/**
 * What a charged call may give back: a diagnostic the service could not run
 * for its own reasons (overload: it could not start in time, its probe thread
 * died) is not paid for. The service says so once per diagnostic it could not
 * run (`unit`); the access interceptor gives the total back to the store once,
 * when the call is over, so a call is refunded at most what it was charged,
 * in one store write.
 */
export interface CallRefund {
  /** One diagnostic of this call was not run: its unit price comes back (at most the call's whole price in all). */
  unit(): void;
}

export const callRefundKey = createContextKey<CallRefund | undefined>(undefined, {
  description: "gives back the price of a diagnostic the service could not run",
});

/** The tab of one charged call: `credits` over `units` diagnostics. */
export function refundTab(credits: number, units: number): CallRefund & { owed(): number } {
  const unitCredits = units > 0 ? credits / units : credits;
  let given = 0;
  return {
    unit: () => {
      given = Math.min(units, given + 1);
    },
    owed: () => Math.round(given * unitCredits),
  };
}
