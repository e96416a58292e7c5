import { type AbortWatch, createDeadline } from "../probe/clock.js";
import { LATE_START_GRACE_MS, type Overload } from "../probe/overload.js";

/**
 * The time a trace may spend: each request gets the per-request timeout or
 * what is left of the whole-trace budget, whichever is smaller, and one signal
 * ends whatever request is in flight when the caller gives up or our own work
 * overruns.
 *
 * The budget is the target's time on the wire: the sum of the requests' own
 * times, not the wall time since the first one. Between requests the trace
 * reads, decides and waits for its thread; on a busy machine that is our delay,
 * and a `trace_timeout` must mean the target's requests used the whole budget.
 * Our delay is bounded too: past the budget plus LATE_START_GRACE_MS of wall
 * time the trace is ended as overload (a retryable 503, no verdict on the
 * target), as a trace that could not start in time is.
 */
export interface TraceBudget {
  /** Aborts when the caller gives up or our own work overruns (overrun()); a request out of budget ends by its own timeout. */
  readonly signal: AbortWatch;
  /** The timeout for the next request; null when no time is left for one. */
  nextRequestTimeoutMs(): { readonly timeoutMs: number; readonly limitedByBudget: boolean } | null;
  /** True once the requests have used the whole-trace budget (or our own work overran it). */
  spent(): boolean;
  /** Why the trace must be answered as overload: its wall time ran past the budget plus the grace; null otherwise. */
  overrun(): Overload | null;
  /** True when the caller's own signal ended the trace. */
  cancelled(): boolean;
  /** Adds one request's own time in tenths of a millisecond (requestTenths, diagnostic-details.ts), read on the loop that ran it. */
  recordRequest(tenths: number): void;
  /** The sum of the recorded requests' times in whole milliseconds, half up: what the trace reports, free of this thread's queueing. */
  requestsMs(): number;
  /** Stops the overrun timer; call once the trace is over. */
  dispose(): void;
}

export interface BudgetLimits {
  readonly hopTimeoutMs: number;
  readonly totalTimeoutMs: number;
}

/**
 * The budget starts now, when the trace sends its first request: a trace that
 * waited for its turn longer than LATE_START_GRACE_MS is overload before
 * this (traceRedirects), and one that waited less is given its whole budget,
 * so a trace_timeout always means the target's own requests used it.
 */
export function startTraceBudget(limits: BudgetLimits, caller?: AbortWatch): TraceBudget {
  const startedAt = performance.now();
  const wallCapMs = limits.totalTimeoutMs + LATE_START_GRACE_MS;
  // One deadline ended by the timer or by the caller, linked by hand: AbortSignal.any tracks a composite signal
  // through weak references, and even an AbortController's signal is dear on Node 20 (docs/benchmarks.md).
  const ended = createDeadline();
  let overran = false;
  const timer = setTimeout(() => {
    overran = true;
    ended.abort(new Error(`the trace's own work ran past its ${limits.totalTimeoutMs} ms budget by over ${LATE_START_GRACE_MS} ms`));
  }, wallCapMs);
  const onCaller = () => ended.abort(caller?.reason);
  if (caller?.aborted === true) onCaller();
  else caller?.addEventListener("abort", onCaller, { once: true });
  const signal = ended.signal;
  let requestsTenths = 0;
  const remainingMs = () => limits.totalTimeoutMs - requestsTenths / 10;

  return {
    signal,
    nextRequestTimeoutMs() {
      // Less than a millisecond left cannot carry a request; count it as spent.
      const remaining = Math.floor(remainingMs());
      if (remaining < 1 || signal.aborted) return null;
      if (remaining < limits.hopTimeoutMs) return { timeoutMs: remaining, limitedByBudget: true };
      return { timeoutMs: limits.hopTimeoutMs, limitedByBudget: false };
    },
    spent: () => overran || remainingMs() < 1,
    overrun: () =>
      overran
        ? {
            why: "overrun",
            detail: `its own work took ${Math.round(performance.now() - startedAt - requestsTenths / 10)} ms between requests, past the ${limits.totalTimeoutMs} ms budget and a grace of ${LATE_START_GRACE_MS} ms`,
          }
        : null,
    cancelled: () => caller?.aborted === true,
    recordRequest: (tenths) => {
      requestsTenths += tenths;
    },
    requestsMs: () => Math.round(requestsTenths / 10),
    dispose: () => {
      clearTimeout(timer);
      caller?.removeEventListener("abort", onCaller);
    },
  };
}
