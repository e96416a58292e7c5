import type { Metrics } from "../../observability/metrics.js";
import type { DiagnosticRunner, HopTally } from "../../runner/diagnostic-runner.js";

/** Every hop the runner's diagnostics make, wherever they run, counted by outcome as each diagnostic ends (sitediag_outbound_hops_total); returns the unsubscribe. */
export function countOutboundHops(runner: Pick<DiagnosticRunner, "onHops">, metrics: Pick<Metrics, "outboundHops">): () => void {
  return runner.onHops((hops) => {
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
