import { type AbortWatch, createDeadline } from "../probe/clock.js";

/**
 * The time a trace may spend: each request gets the per-request timeout or
 * what is left of the whole-trace budget, whichever is smaller, and one signal
 * ends whatever request is in flight when the budget or the caller runs out.
 */
export interface TraceBudget {
  /** Aborts when the whole-trace budget is spent or the caller gives up. */
  readonly signal: AbortWatch;
  /** The timeout for the next request; null when no time is left for one. */
  nextRequestTimeoutMs(): { readonly timeoutMs: number; readonly limitedByBudget: boolean } | null;
  /** True once the whole-trace budget is spent. */
  spent(): boolean;
  /** True when the caller's own signal ended the trace. */
  cancelled(): boolean;
  /** Adds one request's own time in tenths of a millisecond (requestTenths, diagnostic-details.ts), read on the loop that ran it. */
  recordRequest(tenths: number): void;
  /** The sum of the recorded requests' times in whole milliseconds, half up: what the trace reports, free of this thread's queueing. */
  requestsMs(): number;
  /** Stops the budget timer; call once the trace is over. */
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
  // One deadline ended by the timer or by the caller, linked by hand: AbortSignal.any tracks a composite signal
  // through weak references, and even an AbortController's signal is dear on Node 20 (docs/benchmarks.md).
  const ended = createDeadline();
  let timerFired = false;
  const timer = setTimeout(
    () => {
      timerFired = true;
      ended.abort(new Error(`trace budget of ${limits.totalTimeoutMs} ms spent`));
    },
    limits.totalTimeoutMs - (performance.now() - startedAt),
  );
  const onCaller = () => ended.abort(caller?.reason);
  if (caller?.aborted === true) onCaller();
  else caller?.addEventListener("abort", onCaller, { once: true });
  const signal = ended.signal;
  const elapsedMs = () => performance.now() - startedAt;
  const remainingMs = () => limits.totalTimeoutMs - elapsedMs();
  let requestsTenths = 0;

  return {
    signal,
    nextRequestTimeoutMs() {
      // Less than a millisecond left cannot carry a request; count it as spent.
      const remaining = Math.floor(remainingMs());
      if (remaining < 1 || signal.aborted) return null;
      if (remaining < limits.hopTimeoutMs) return { timeoutMs: remaining, limitedByBudget: true };
      return { timeoutMs: limits.hopTimeoutMs, limitedByBudget: false };
    },
    spent: () => timerFired || remainingMs() < 1,
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
