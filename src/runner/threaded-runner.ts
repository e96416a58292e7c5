import { type DiagnosticLimits, limitsOf } from "../diagnostics/diagnostic-call.js";
import type { RedirectTraceOutcome } from "../diagnostics/redirect-trace-result.js";
import type { SiteCheckOutcome } from "../diagnostics/site-check-result.js";
import type { AbortWatch } from "../probe/clock.js";
import type { Overload } from "../probe/overload.js";
import { sharedClockMs } from "../probe/clock.js";
import { type DiagnosticAnswer, type DiagnosticJob, type DiagnosticRunner, hopListeners } from "./diagnostic-runner.js";
import { ProbeThreadUnavailable, type ProbeThreads } from "./probe-threads.js";

/** A runner on probe threads, and the threads (operations and tests look at them; several runners may share them). */
export interface ThreadedRunner extends DiagnosticRunner {
  readonly threads: ProbeThreads;
}

/**
 * Each diagnostic runs whole as a job on one of `threads`, under `limits`:
 * the call crosses once each way, however many hops it makes. Its timeouts
 * count from the call, as a diagnostic run here counts them: a call that
 * names no timeoutsFrom is stamped with the shared clock as it is handed
 * over, so waiting for a busy thread to start it is not given to the target.
 * A caller whose signal ended hears `cancelled` with its own reason. A
 * thread that died with the call, or no thread running to take it, is
 * `overloaded`: retryable, no verdict, and the call is not sent again.
 * Closing the runner closes the threads.
 */
export function createThreadedRunner(threads: ProbeThreads, limits: DiagnosticLimits): ThreadedRunner {
  // Only the limits cross with each job: whatever else the given object holds may not clone.
  const jobLimits = limitsOf(limits);
  const hops = hopListeners();
  const run = async <O>(
    job: DiagnosticJob,
    signal: AbortWatch | undefined,
  ): Promise<
    O | { readonly kind: "cancelled"; readonly reason: unknown } | { readonly kind: "overloaded"; readonly overload: Overload }
  > => {
    let answer: DiagnosticAnswer<O>;
    try {
      // A diagnostic thread answers a job with nothing but its DiagnosticAnswer (thread-host.ts).
      answer = (await threads.run(job, signal)) as DiagnosticAnswer<O>;
    } catch (error) {
      if (!(error instanceof ProbeThreadUnavailable)) throw error;
      if (signal?.aborted === true) return { kind: "cancelled", reason: signal.reason };
      return { kind: "overloaded", overload: error.overload };
    }
    hops.tell(answer.hops);
    if (signal?.aborted === true) return { kind: "cancelled", reason: signal.reason };
    return answer.outcome;
  };
  return {
    checkSite: (raw, signal, options) =>
      run<SiteCheckOutcome>(
        {
          kind: "site-check",
          raw,
          limits: jobLimits,
          options: options.timeoutsFrom === undefined ? Object.assign({}, options, { timeoutsFrom: sharedClockMs() }) : options,
        },
        signal,
      ),
    traceRedirects: (raw, signal, options) =>
      run<RedirectTraceOutcome>(
        {
          kind: "trace",
          raw,
          limits: jobLimits,
          options: options.timeoutsFrom === undefined ? Object.assign({}, options, { timeoutsFrom: sharedClockMs() }) : options,
        },
        signal,
      ),
    onHops: hops.onHops,
    load: threads.load,
    threads,
    ready: () => threads.ready(),
    close: () => threads.close(),
  };
}
