import type { HopOutcome } from "../probe/hop-types.js";
import { observedProber } from "../probe/observed-prober.js";
import type { JobRunner } from "../probe/probe-thread-host.js";
import type { DiagnosticLimits, HopTally } from "./diagnostic-env.js";
import type { SiteCheckOptions, TraceOptions } from "./diagnostic-call.js";
import { traceRedirects } from "./redirect-trace.js";
import type { RedirectTraceOutcome } from "./redirect-trace-result.js";
import { checkSite } from "./site-check.js";
import type { SiteCheckOutcome } from "./site-check-result.js";

/** One diagnostic as it crosses to a probe thread: the call's arguments but the signal (a cancel message), and the limits it runs under. */
export type DiagnosticJob = { readonly limits: DiagnosticLimits; readonly raw: string } & (
  | { readonly kind: "site-check"; readonly options: SiteCheckOptions }
  | { readonly kind: "trace"; readonly options: TraceOptions }
);

/** What the thread answers: the diagnostic's outcome, and how each of its hops ended (for the hop metric on the main thread). */
export type DiagnosticAnswer<O> = { readonly outcome: O; readonly hops: readonly HopTally[] };

export type SiteCheckAnswer = DiagnosticAnswer<SiteCheckOutcome>;
export type TraceAnswer = DiagnosticAnswer<RedirectTraceOutcome>;

/**
 * The job runner of a diagnostic thread: runs the diagnostic whole with the
 * thread's own prober, so a chain of hops crosses between threads once, not
 * once per hop.
 */
export const runDiagnosticJob: JobRunner = async (job, { prober, signal }) => {
  // The main thread sends a diagnostic thread nothing but DiagnosticJobs (threaded-diagnostics.ts).
  const request = job as DiagnosticJob;
  const hops: HopTally[] = [];
  const env = Object.assign({}, request.limits, { prober: observedProber(prober, (outcome) => hops.push(tallyOf(outcome))) });
  if (request.kind === "site-check") return { outcome: await checkSite(request.raw, env, signal, request.options), hops } satisfies SiteCheckAnswer;
  return { outcome: await traceRedirects(request.raw, env, signal, request.options), hops } satisfies TraceAnswer;
};

/** Only what counting reads, so the answer does not carry each outcome twice. */
function tallyOf(outcome: HopOutcome): HopTally {
  if (outcome.kind !== "failure") return { kind: outcome.kind };
  return { kind: "failure", failure: { stage: outcome.failure.stage, timedOut: outcome.failure.timedOut } };
}
