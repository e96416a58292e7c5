import type { Metrics } from "../../observability/metrics.js";
import { openApiDocumentJson } from "../../openapi/openapi-document.js";
import { methodNotAllowed, type NodeResponse, sendJson, answerDefect } from "../door/json-answer.js";
import type { PlainHttpRoute } from "../door/route-table.js";

/** Answers whether the service can take diagnostic calls now (the store is reachable and accepting). */
export type ReadinessCheck = () => Promise<boolean>;

const PROBE_METHODS = ["GET", "HEAD"];

/**
 * GET /healthz (the process answers) and GET /readyz (it can take calls:
 * `ready`, already false while shutting down), for orchestrators. OPTIONS
 * is refused like any other method they do not serve.
 */
export function answerProbe(
  path: string,
  method: string,
  response: NodeResponse,
  ready: () => Promise<boolean>,
  cors: Headers,
  onDefect: (error: unknown) => void,
): void {
  if (!PROBE_METHODS.includes(method)) return methodNotAllowed(response, PROBE_METHODS, cors, null);
  if (path === "/healthz") return sendJson(response, 200, { status: "alive" }, cors);
  ready().then(
    (isReady) => sendJson(response, isReady ? 200 : 503, { status: isReady ? "ready" : "not_ready" }, cors),
    (reason: unknown) => answerDefect(response, reason, onDefect),
  );
}

/**
 * Runs a readiness check, treating a failure to answer as "not ready": a
 * probe that throws or hangs must not be mistaken for a healthy store.
 */
export async function isReady(check: ReadinessCheck, closing: boolean, timeoutMs: number): Promise<boolean> {
  if (closing) return false;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([check().catch(() => false), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

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
export async function sendExposition(
  headOnly: boolean,
  response: NodeResponse,
  metrics: Pick<Metrics, "exposition" | "contentType">,
): Promise<void> {
  const body = Buffer.from(await metrics.exposition(), "utf8");
  response.setHeader("content-type", metrics.contentType);
  response.setHeader("content-length", body.byteLength);
  response.setHeader("cache-control", "no-store");
  response.writeHead(200);
  if (headOnly) response.end();
  else response.end(body);
}

/**
 * GET /openapi.json: the OpenAPI 3.1 document generated from the proto;
 * public, no key. The document is read and encoded once, here, at start-up:
 * a package installed without gen/ fails to start rather than answer 500.
 */
export function openApiRoute(): PlainHttpRoute {
  const body = Buffer.from(openApiDocumentJson(), "utf8");
  return {
    path: "/openapi.json",
    methods: ["GET", "HEAD"],
    handle: (request, response) => {
      response.setHeader("content-type", "application/json; charset=utf-8");
      response.setHeader("content-length", body.byteLength);
      // The document changes only with a new build: caches may keep it a while.
      response.setHeader("cache-control", "public, max-age=300");
      response.writeHead(200);
      if (request.method === "HEAD") response.end();
      else response.end(body);
    },
  };
}
