import http from "node:http";
import type net from "node:net";
import type { Metrics } from "../../observability/metrics.js";
import { baseUrlOf } from "../door/dual-protocol-listener.js";
import { errorBody, metaFor, sendJson } from "../door/json-answer.js";
import { requestTargetOf } from "../door/request-target.js";
import { METRICS_PATH, sendExposition } from "./plain-routes.js";

export interface MetricsListener {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * GET /metrics alone, on its own port (SITEDIAG_METRICS_PORT), so it can be
 * kept off the public interface by a firewall or a network policy while the
 * API port stays open. Plain HTTP/1.1: that is what scrapers speak.
 */
export async function listenForMetrics(options: {
  readonly host: string;
  readonly port: number;
  readonly metrics: Pick<Metrics, "exposition" | "contentType">;
  readonly onDefect: (error: unknown) => void;
}): Promise<MetricsListener> {
  const server = http.createServer({ headersTimeout: 10_000, keepAliveTimeout: 5_000, requestTimeout: 30_000 }, (request, response) => {
    // A port of its own, with no Arrival: its one reading of the target.
    const { path } = requestTargetOf(request.url ?? "/");
    if (path !== METRICS_PATH)
      return sendJson(response, 404, errorBody("not_found", `only ${METRICS_PATH} is served on this port`, metaFor(null)));
    if (request.method !== "GET" && request.method !== "HEAD") {
      return sendJson(response, 405, errorBody("unimplemented", "use GET", metaFor(null)), new Headers({ allow: "GET, HEAD" }));
    }
    sendExposition(request.method === "HEAD", response, options.metrics).catch((error: unknown) => {
      options.onDefect(error);
      response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = server.address() as net.AddressInfo;
  return {
    url: baseUrlOf(bound.address, bound.port),
    port: bound.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
