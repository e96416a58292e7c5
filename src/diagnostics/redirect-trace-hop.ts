import type { ProbeFailure } from "../probe/failure.js";
import type { ConnectionHandle, HopFailureTrace, HopOutcome, HopResponse, PortRule, Prober } from "../probe/hop-types.js";
import type { Overload } from "../probe/overload.js";
import type { NameResolution } from "../probe/name-resolution.js";
import type { PolicyRefusal } from "../shared/failures.js";
import type { TraceBudget } from "./redirect-trace-budget.js";
import { requestTenths } from "./diagnostic-details.js";

/** Why a request ran out of time: its own per-request timeout, or the whole trace's budget. */
export type TimeoutSource = "request" | "trace";

/** What one position of the chain came to, after the GET fallback when it was needed. */
export type HopAttempt =
  | {
      readonly kind: "response";
      readonly response: HopResponse;
      readonly method: "HEAD" | "GET";
      readonly headNote: string | null;
      /** The HEAD's own outcome when a GET answered in its place: a request made, with its own record. */
      readonly head: HopOutcome | null;
    }
  | {
      readonly kind: "failure";
      readonly failure: ProbeFailure;
      /** How far the request got: partial timings, the certificate seen. */
      readonly trace: HopFailureTrace;
      readonly method: "HEAD" | "GET";
      readonly headNote: string | null;
      /** The HEAD's own outcome when this failure is the GET's. */
      readonly head: HopOutcome | null;
      readonly timeout: TimeoutSource | null;
      readonly timeoutMs: number;
    }
  /** `resolution`: what the name resolved to, when the refusal came after DNS (a non-public answer). */
  | { readonly kind: "refused"; readonly refusal: PolicyRefusal; readonly resolution?: NameResolution }
  /** Our own capacity failed the request (its probe thread died): no verdict on the target. */
  | { readonly kind: "overloaded"; readonly overload: Overload }
  /** The budget was spent before a request could be sent; `head` is the HEAD's outcome when one was sent. */
  | { readonly kind: "out-of-time"; readonly headNote: string | null; readonly head: HopOutcome | null };

/**
 * One position of the chain: HEAD first, because it asks for no body. Servers
 * that answer HEAD with an error, or break the connection on it, often serve
 * GET fine, so those get one GET and the hop reports what GET got. A HEAD that
 * timed out is not retried: a second wait would only spend the budget.
 * `keepFinal` (details were asked for): a final answer's connection is kept
 * for one more request to this URL (the GET of the final page that details
 * make), and each response's header fields are kept for details.
 */
export async function attemptHop(
  prober: Prober,
  url: URL,
  ports: PortRule,
  budget: TraceBudget,
  cookie?: string,
  reuse: ConnectionHandle | null = null,
  keepFinal = false,
  readDnssec = false,
): Promise<HopAttempt> {
  const head = await send(prober, url, "HEAD", ports, budget, cookie, reuse, keepFinal, readDnssec);
  if (head.kind !== "sent") return { kind: "out-of-time", headNote: null, head: null };
  if (!needsGet(head.outcome, budget)) return settle(head.outcome, "HEAD", head.timeoutMs, head.limitedByBudget, null, null, budget);

  const headNote = describeHead(head.outcome);
  const get = await send(prober, url, "GET", ports, budget, cookie, null, keepFinal, false);
  if (get.kind !== "sent") return { kind: "out-of-time", headNote, head: head.outcome };
  return settle(get.outcome, "GET", get.timeoutMs, get.limitedByBudget, headNote, head.outcome, budget);
}

type Sent =
  | { readonly kind: "sent"; readonly outcome: HopOutcome; readonly timeoutMs: number; readonly limitedByBudget: boolean }
  | { readonly kind: "out-of-time" };

async function send(
  prober: Prober,
  url: URL,
  method: "HEAD" | "GET",
  ports: PortRule,
  budget: TraceBudget,
  cookie: string | undefined,
  reuse: ConnectionHandle | null,
  keepFinal: boolean,
  readDnssec: boolean,
): Promise<Sent> {
  const next = budget.nextRequestTimeoutMs();
  if (next === null) return { kind: "out-of-time" };
  const outcome = await prober.hop({
    url,
    method,
    timeoutMs: next.timeoutMs,
    ports,
    signal: budget.signal,
    ...(cookie === undefined ? {} : { cookie }),
    ...(reuse === null ? {} : { reuse }),
    // Details' own: the final page is read once more, each response's header fields are kept, each name's CNAME chain asked.
    ...(keepFinal ? { keepAfterAnswer: true, captureHead: true, describeResolution: true } : {}),
    ...(readDnssec ? { readDnssec: true } : {}),
  });
  budget.recordRequest(requestTenths(outcome));
  return { kind: "sent", outcome, ...next };
}

function needsGet(outcome: HopOutcome, budget: TraceBudget): boolean {
  if (budget.signal.aborted) return false;
  if (outcome.kind === "response") return outcome.response.status >= 400;
  if (outcome.kind === "failure") return outcome.failure.stage === "http" && !outcome.failure.timedOut;
  return false;
}

function settle(
  outcome: HopOutcome,
  method: "HEAD" | "GET",
  timeoutMs: number,
  limitedByBudget: boolean,
  headNote: string | null,
  head: HopOutcome | null,
  budget: TraceBudget,
): HopAttempt {
  if (outcome.kind === "refused")
    return outcome.resolution === undefined
      ? { kind: "refused", refusal: outcome.refusal }
      : { kind: "refused", refusal: outcome.refusal, resolution: outcome.resolution };
  if (outcome.kind === "overloaded") return { kind: "overloaded", overload: outcome.overload };
  if (outcome.kind === "response") return { kind: "response", response: outcome.response, method, headNote, head };
  const { failure } = outcome;
  // The budget's signal can end a request a hair before the request's own
  // timer would have; either way the trace, not the hop, ran out of time.
  const timedOut = failure.timedOut || budget.signal.aborted;
  const timeout: TimeoutSource | null = !timedOut ? null : limitedByBudget || budget.spent() ? "trace" : "request";
  return { kind: "failure", failure, trace: outcome.trace, method, headNote, head, timeout, timeoutMs };
}

function describeHead(outcome: HopOutcome): string {
  if (outcome.kind === "response") return `HEAD answered ${outcome.response.status} ${outcome.response.statusText}`;
  if (outcome.kind === "failure") return `HEAD failed: ${outcome.failure.reason}`;
  if (outcome.kind === "overloaded") return `HEAD was not answered: ${outcome.overload.detail}`;
  return `HEAD was refused: ${outcome.refusal.reason}`;
}
