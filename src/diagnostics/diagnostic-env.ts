import type { AbortWatch } from "../probe/deadline.js";
import type { Prober } from "../probe/hop-types.js";
import type { FailureStage } from "../probe/failure.js";
import type { RedirectTraceOutcome } from "./redirect-trace-result.js";
import type { SiteCheckOptions, TraceOptions } from "./diagnostic-call.js";
import type { SiteCheckOutcome } from "./site-check-result.js";

/** The limits a diagnostic runs under. */
export interface DiagnosticLimits {
  /** is-site-down per-request timeout (spec §4.1: 6 s). */
  readonly siteTimeoutMs: number;
  /** redirect-check per-request timeout (spec §8: 3 s). */
  readonly traceHopTimeoutMs: number;
  /** redirect-check whole-trace budget (spec §8: 30 s). */
  readonly traceTotalTimeoutMs: number;
  /** Ports redirect-check may visit (spec §4.2: 80 and 443). */
  readonly tracePorts: readonly number[];
}

/** What a diagnostic needs from the world: the prober, and the limits in force. */
export interface DiagnosticEnv extends DiagnosticLimits {
  readonly prober: Prober;
  /**
   * Present when diagnostics run whole on probe threads (SITEDIAG_PROBE_THREADS
   * > 0): checkSite and traceRedirects hand the call to one, which runs it with
   * its own prober under the same limits.
   */
  readonly threads?: DiagnosticThreads;
}

/** Diagnostics that run on probe threads: the same calls, each crossing to a thread once, with the env's limits. */
export interface DiagnosticThreads {
  checkSite(raw: string, limits: DiagnosticLimits, signal: AbortWatch | undefined, options: SiteCheckOptions): Promise<SiteCheckOutcome>;
  traceRedirects(raw: string, limits: DiagnosticLimits, signal: AbortWatch | undefined, options: TraceOptions): Promise<RedirectTraceOutcome>;
  /** Told of the hops each diagnostic made on a thread, when it answers (the outbound-hop metric); returns the unsubscribe. */
  onHops(listener: (hops: readonly HopTally[]) => void): () => void;
}

/** How one hop ended, as much as counting it needs; a HopOutcome is one. */
export type HopTally =
  | { readonly kind: "response" }
  | { readonly kind: "failure"; readonly failure: { readonly stage: FailureStage; readonly timedOut: boolean } }
  | { readonly kind: "refused" }
  | { readonly kind: "overloaded" };

/** Only the limits of an env (what crosses to a diagnostic thread with each call). */
export function limitsOf(env: DiagnosticLimits): DiagnosticLimits {
  return { siteTimeoutMs: env.siteTimeoutMs, traceHopTimeoutMs: env.traceHopTimeoutMs, traceTotalTimeoutMs: env.traceTotalTimeoutMs, tracePorts: env.tracePorts };
}
