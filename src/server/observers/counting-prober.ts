import type { DiagnosticThreads, HopTally } from "../../diagnostics/diagnostic-env.js";
import type { Prober } from "../../probe/hop-types.js";
import { observedProber } from "../../probe/observed-prober.js";
import type { Metrics } from "../../observability/metrics.js";

/** The prober, counting every hop it makes on this thread by outcome (sitediag_outbound_hops_total). */
export function countingProber(prober: Prober, metrics: Pick<Metrics, "outboundHops">): Prober {
  return observedProber(prober, (outcome) => metrics.outboundHops.inc(hopLabels(outcome)));
}

/** The hops diagnostics make on their threads, counted as they answer, alike; returns the unsubscribe. */
export function countThreadHops(threads: DiagnosticThreads, metrics: Pick<Metrics, "outboundHops">): () => void {
  return threads.onHops((hops) => {
    for (const hop of hops) metrics.outboundHops.inc(hopLabels(hop));
  });
}

function hopLabels(outcome: HopTally): { outcome: string; stage: string } {
  switch (outcome.kind) {
    case "response":
      return { outcome: "response", stage: "none" };
    case "failure":
      return { outcome: outcome.failure.timedOut ? "timeout" : "failure", stage: outcome.failure.stage };
    case "refused":
      return { outcome: "refused", stage: "none" };
    case "overloaded":
      return { outcome: "overloaded", stage: "none" };
  }
}
