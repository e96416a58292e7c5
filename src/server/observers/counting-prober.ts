import type { DiagnosticThreads, HopTally } from "../../diagnostics/diagnostic-env.js";
import type { Prober } from "../../probe/hop-types.js";
import type { Metrics } from "../../observability/metrics.js";

/**
 * The prober, counting every hop it makes by outcome. Both diagnostics reach
 * targets only through the prober, so this sees every outbound request made
 * on this thread without the probe engine knowing about metrics.
 */
export function countingProber(prober: Prober, metrics: Pick<Metrics, "outboundHops">): Prober {
  return {
    screen: (url, ports) => prober.screen(url, ports),
    hop: async (request) => {
      const outcome = await prober.hop(request);
      metrics.outboundHops.inc(hopLabels(outcome));
      return outcome;
    },
    close: () => prober.close(),
    ...(prober.load === undefined ? {} : { load: prober.load }),
  };
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
  }
}
