import type { DiagnosticLimits, SiteCheckOptions, TraceOptions } from "../diagnostics/diagnostic-call.js";
import type { RedirectTraceOutcome } from "../diagnostics/redirect-trace-result.js";
import type { SiteCheckOutcome } from "../diagnostics/site-check-result.js";
import type { AbortWatch } from "../probe/clock.js";
import type { FailureStage } from "../shared/failures.js";
import type { ProbeLoad } from "./probe-threads.js";

/**
 * Where a diagnostic runs, chosen once where the service or a command is
 * composed: in this process (createLocalRunner), or whole on a probe thread
 * (createThreadedRunner). A call is plain data in (the input as given, the
 * options) and plain data out (the outcome), plus a signal: whatever runs it
 * may be another thread or another machine. The limits in force are the
 * runner's own, fixed when it is made.
 */
export interface DiagnosticRunner {
  /** is-site-down (diagnostics/site-check.ts). Never throws for the target's sake; rejects only on a defect of ours. */
  checkSite(raw: string, signal: AbortWatch | undefined, options: SiteCheckOptions): Promise<SiteCheckOutcome>;
  /** redirect-check (diagnostics/redirect-trace.ts), alike. */
  traceRedirects(raw: string, signal: AbortWatch | undefined, options: TraceOptions): Promise<RedirectTraceOutcome>;
  /**
   * Told how the hops of each diagnostic ended, once it has (the outbound-hop
   * metric); returns the unsubscribe. A batch is its diagnostics one by one,
   * so this is all its metrics need too.
   */
  onHops(listener: (hops: readonly HopTally[]) => void): () => void;
  /** Present when diagnostics wait for loops of their own (probe threads): admission, readiness and metrics read it. */
  readonly load?: ProbeLoad;
  /** Resolves once a diagnostic handed over now starts at once (probe threads booted); `serve` waits for it before it listens. */
  ready(): Promise<void>;
  /** Lets the diagnostics in flight finish, then releases the prober or threads. */
  close(): Promise<void>;
}

/** How one hop ended, as much as counting it needs; a HopOutcome is one. */
export type HopTally =
  | { readonly kind: "response" }
  | { readonly kind: "failure"; readonly failure: { readonly stage: FailureStage; readonly timedOut: boolean } }
  | { readonly kind: "refused" }
  | { readonly kind: "overloaded" };

/** One diagnostic as plain data: the call's arguments but the signal, and the limits it runs under. */
export type DiagnosticJob = { readonly limits: DiagnosticLimits; readonly raw: string } & (
  | { readonly kind: "site-check"; readonly options: SiteCheckOptions }
  | { readonly kind: "trace"; readonly options: TraceOptions }
);

/** What running a DiagnosticJob answers: the diagnostic's outcome, and how each of its hops ended. */
export type DiagnosticAnswer<O = SiteCheckOutcome | RedirectTraceOutcome> = { readonly outcome: O; readonly hops: readonly HopTally[] };

/** The listeners of a runner's hop tallies. */
export function hopListeners(): { readonly tell: (hops: readonly HopTally[]) => void; readonly onHops: DiagnosticRunner["onHops"] } {
  const listeners = new Set<(hops: readonly HopTally[]) => void>();
  return {
    tell: (hops) => {
      for (const listener of listeners) listener(hops);
    },
    onHops: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
