import type { Worker } from "node:cluster";
import { AggregatorRegistry } from "prom-client";
import type { Metrics } from "../../observability/metrics.js";
import { isPrimaryMessage, type MetricsRequestMessage, type MetricsResponseMessage } from "./cluster-messages.js";

/** A scrape waits at most this long for the primary (prom-client itself gives up on a silent worker after 5 s). */
const ASK_TIMEOUT_MS = 10_000;

/**
 * In a worker: the same metrics, but a scrape answers for the whole instance.
 * The worker's registry is handed to prom-client's cluster responder, and the
 * exposition is asked of the primary, which collects every worker's registry
 * (this one's included) and sums them.
 */
export function clusterWideMetrics(metrics: Metrics): Metrics {
  // Constructing one installs prom-client's worker-side responder.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([metrics.registry]);
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  let nextId = 0;

  process.on("message", (message: unknown) => {
    if (!isPrimaryMessage(message) || message.type !== "sitediag:metrics-response") return;
    const waiting = pending.get(message.id);
    if (waiting === undefined) return;
    pending.delete(message.id);
    clearTimeout(waiting.timer);
    if ("text" in message) waiting.resolve(message.text);
    else waiting.reject(new Error(`the primary could not collect metrics: ${message.error}`));
  });
  process.on("disconnect", () => {
    for (const [id, waiting] of pending) {
      pending.delete(id);
      clearTimeout(waiting.timer);
      waiting.reject(new Error("the primary is gone"));
    }
  });

  const exposition = () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const request: MetricsRequestMessage = { type: "sitediag:metrics-request", id };
      if (process.send === undefined || !process.connected) {
        reject(new Error("no channel to the primary"));
        return;
      }
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the primary did not answer a metrics request within ${ASK_TIMEOUT_MS} ms`));
      }, ASK_TIMEOUT_MS);
      pending.set(id, { resolve, reject, timer });
      process.send(request);
    });
  return Object.assign({}, metrics, { exposition });
}

/**
 * In the primary: answers workers' metrics requests with the sum over all
 * live workers, by prom-client's aggregation (counters and histograms add up;
 * process metrics use prom-client's own per-metric rules).
 */
export function createMetricsAnswerer(): (worker: Worker, request: MetricsRequestMessage) => void {
  const aggregator = new AggregatorRegistry();
  return (worker, request) => {
    aggregator.clusterMetrics().then(
      (text) => reply(worker, { type: "sitediag:metrics-response", id: request.id, text }),
      (error: unknown) =>
        reply(worker, { type: "sitediag:metrics-response", id: request.id, error: error instanceof Error ? error.message : String(error) }),
    );
  };
}

function reply(worker: Worker, message: MetricsResponseMessage): void {
  // A worker that died meanwhile has nobody waiting.
  if (worker.isConnected()) worker.send(message);
}
