import { type Admission, type DoorHandler } from "./door/call-intake.js";
import type { CorsPolicy } from "./door/cors-policy.js";
import { answerDefect, errorBody, metaFor, methodNotAllowed, sendEmpty, sendJson } from "./door/json-answer.js";
import { RequestAbortedError } from "./door/request-body.js";
import { refusedLongTarget } from "./door/request-refusals.js";
import type { RouteTable } from "./door/route-table.js";
import { answerProbe } from "./ops/plain-routes.js";
import { createRestAdapter } from "./rest/rest-adapter.js";
import type { LocalCalls } from "./rest/local-calls.js";
import { serveRpc } from "./rpc/rpc-door.js";

export interface HttpHandlerOptions {
  readonly routes: RouteTable;
  /** The REST door's way in: the service and interceptors, called in memory. */
  readonly local: LocalCalls;
  readonly cors: CorsPolicy;
  /** Readiness as /readyz reports it (already false while shutting down). */
  readonly ready: () => Promise<boolean>;
  /** True once shutdown has begun: HTTP/1.1 clients are asked to close their connection. */
  readonly closing: () => boolean;
  /** Told about failures that are the server's own defects. */
  readonly onDefect: (error: unknown) => void;
  /** Checked from the headers of every diagnostic call, on every door, before its body; none lets every call through. */
  readonly admission: Admission | undefined;
  /** Largest JSON body of a REST POST route. */
  readonly maxRequestBytes: number;
  /** Longest request target (path and query) served; longer ones get 414 before any route. */
  readonly maxUrlBytes: number;
}

const RPC_METHODS = ["POST", "GET", "OPTIONS"];

/**
 * Routes every request of the port, by the route table:
 * - a request target over the limit: 414, naming the tool of its path;
 * - /healthz and /readyz, the plain-HTTP probes;
 * - plain endpoints the application adds (/openapi.json, /metrics);
 * - the REST door's routes, read from the google.api.http annotations;
 * - the RPC paths (/sitediag.v1.DiagnosticsService/CheckSite, health,
 *   reflection) to Connect's handlers for Connect, gRPC and gRPC-Web;
 * - anything else: 404, as a JSON error envelope.
 * Every response carries the CORS headers; OPTIONS on a known path is a
 * preflight answer.
 */
export function createHttpHandler(options: HttpHandlerOptions): DoorHandler {
  const { routes, local, cors, onDefect } = options;
  for (const route of routes.restRoutes) {
    if (!local.serves(route.method)) throw new Error(`REST route ${route.path} has no in-memory implementation`);
  }
  const rest = createRestAdapter({ calls: local, onDefect, admission: options.admission, maxRequestBytes: options.maxRequestBytes });

  return (request, response, arrival) => {
    if (refusedLongTarget(request, response, options.maxUrlBytes, routes.toolOf, cors)) return;
    if (options.closing() && request.httpVersionMajor === 1) response.setHeader("connection", "close");
    const { path } = arrival.target;
    const method = request.method ?? "GET";
    const headers = cors.simpleHeaders();
    const route = routes.routeOf(path);

    switch (route?.kind) {
      case "probe":
        return answerProbe(route.path, method, response, options.ready, headers, onDefect);
      case "plain": {
        const { plain } = route;
        if (method === "OPTIONS") return sendEmpty(response, 204, cors.preflightHeaders([...plain.methods, "OPTIONS"]));
        if (!plain.methods.includes(method)) return methodNotAllowed(response, plain.methods, headers, null);
        headers.forEach((value, name) => response.setHeader(name, value));
        Promise.resolve()
          .then(() => plain.handle(request, response))
          .catch((reason: unknown) => answerDefect(response, reason, onDefect));
        return;
      }
      case "rest": {
        const allowed = [route.rest.verb, "OPTIONS"];
        if (method === "OPTIONS") return sendEmpty(response, 204, cors.preflightHeaders(allowed));
        if (method !== route.rest.verb) return methodNotAllowed(response, allowed, headers, route.rest.tool);
        rest(route.rest, route.diagnostic, request, response, headers, arrival).catch((reason: unknown) => {
          // A client that hung up mid-body is not a server defect, and there is no one left to answer.
          if (!(reason instanceof RequestAbortedError)) answerDefect(response, reason, onDefect);
        });
        return;
      }
      case "rpc":
        if (method === "OPTIONS") return sendEmpty(response, 204, cors.preflightHeaders(RPC_METHODS));
        headers.forEach((value, name) => response.setHeader(name, value));
        return serveRpc(route.handler, route.diagnostic, options.admission, request, response, arrival, onDefect);
      case undefined:
        sendJson(response, 404, errorBody("not_found", `no route for ${method} ${path}`, metaFor(null)), headers);
    }
  };
}
