import type { Metrics } from "../../observability/metrics.js";
import type { PlainHttpRoute } from "../http-handler.js";
import type { NodeResponse } from "../json-response.js";

export const METRICS_PATH = "/metrics";

/** GET /metrics on the main port, when no SITEDIAG_METRICS_PORT is set. */
export function metricsRoute(metrics: Pick<Metrics, "exposition" | "contentType">): PlainHttpRoute {
  return {
    path: METRICS_PATH,
    methods: ["GET", "HEAD"],
    handle: (request, response) => sendExposition(request.method === "HEAD", response, metrics),
  };
}

/** Writes the Prometheus text exposition; never cached, every scrape is a new reading. */
export async function sendExposition(headOnly: boolean, response: NodeResponse, metrics: Pick<Metrics, "exposition" | "contentType">): Promise<void> {
  const body = Buffer.from(await metrics.exposition(), "utf8");
  response.setHeader("content-type", metrics.contentType);
  response.setHeader("content-length", body.byteLength);
  response.setHeader("cache-control", "no-store");
  response.writeHead(200);
  if (headOnly) response.end();
  else response.end(body);
}
