import { type AbortWatch, sharedClockMs } from "../probe/clock.js";
import type { Overload } from "../probe/overload.js";
import { ProbeThreadUnavailable, type ThreadedProber } from "../probe/threaded-prober.js";
import type { DiagnosticThreads, HopTally } from "./diagnostic-env.js";
import type { DiagnosticJob, SiteCheckAnswer, TraceAnswer } from "./diagnostic-jobs.js";

/** The module a ThreadedProber starts for diagnostic threads: compiled beside this one, or the source under tsx. */
export const DIAGNOSTIC_THREAD_ENTRY = new URL(import.meta.url.endsWith(".ts") ? "./diagnostic-thread.ts" : "./diagnostic-thread.js", import.meta.url);

/**
 * checkSite and traceRedirects as jobs on the threads of `prober` (started
 * with DIAGNOSTIC_THREAD_ENTRY): each call crosses once each way. Its
 * timeouts count from the call, as a diagnostic run here counts them: a call
 * that names no timeoutsFrom is stamped with the shared clock as it is handed
 * over, so waiting for a busy thread to start it is not given to the target.
 * A caller whose signal ended hears `cancelled` with its own reason. A
 * thread that died with the call, or no thread running to take it, is
 * `overloaded`: retryable, no verdict, and the call is not sent again.
 */
export function threadedDiagnostics(prober: ThreadedProber): DiagnosticThreads {
  const listeners = new Set<(hops: readonly HopTally[]) => void>();
  const run = async <O>(
    job: DiagnosticJob,
    signal: AbortWatch | undefined,
  ): Promise<O | { readonly kind: "cancelled"; readonly reason: unknown } | { readonly kind: "overloaded"; readonly overload: Overload }> => {
    const handedOver: DiagnosticJob = Object.assign({}, job, { options: Object.assign({}, job.options, { timeoutsFrom: job.options.timeoutsFrom ?? sharedClockMs() }) });
    let answer: { readonly outcome: O; readonly hops: readonly HopTally[] };
    try {
      // The thread answers a diagnostic job with nothing but its DiagnosticAnswer (diagnostic-jobs.ts).
      answer = (await prober.run(handedOver, signal)) as typeof answer;
    } catch (error) {
      if (!(error instanceof ProbeThreadUnavailable)) throw error;
      if (signal?.aborted === true) return { kind: "cancelled", reason: signal.reason };
      return { kind: "overloaded", overload: error.overload };
    }
    for (const listener of listeners) listener(answer.hops);
    if (signal?.aborted === true) return { kind: "cancelled", reason: signal.reason };
    return answer.outcome;
  };
  return {
    checkSite: (raw, limits, signal, options) => run<SiteCheckAnswer["outcome"]>({ kind: "site-check", raw, limits, options }, signal),
    traceRedirects: (raw, limits, signal, options) => run<TraceAnswer["outcome"]>({ kind: "trace", raw, limits, options }, signal),
    onHops: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
