import type { Prober } from "../probe/hop-types.js";

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
}

/** Only the limits of an env (what crosses to a probe thread with each diagnostic). */
export function limitsOf(env: DiagnosticLimits): DiagnosticLimits {
  return { siteTimeoutMs: env.siteTimeoutMs, traceHopTimeoutMs: env.traceHopTimeoutMs, traceTotalTimeoutMs: env.traceTotalTimeoutMs, tracePorts: env.tracePorts };
}
