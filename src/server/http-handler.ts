import { Code, ConnectError } from "@connectrpc/connect";
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import type { UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import { API_KEY_HEADER } from "../access/api-key.js";
import { type Admission, releaseWithAnswer } from "./admission/admission.js";
import type { CorsPolicy } from "./cors-policy.js";
import { callContextValues } from "./observers/call-record.js";
import { rpcDoorOf } from "./rpc/door.js";
import type { NodeRequestHandler } from "./listener/dual-protocol-listener.js";
import { RequestAbortedError, requestBody } from "./listener/request-body.js";
import { type NodeResponse, sendEmpty, sendJson } from "./json-response.js";
import { createRestAdapter, type NodeRequest } from "./rest/rest-adapter.js";
import { errorBody, metaFor } from "./rest/rest-envelope.js";
import { restRoutesOf } from "./rest/rest-routes.js";
import type { GuardedMethod, RpcRouter } from "./rpc/rpc-router.js";

/**
 * A plain HTTP endpoint beside the doors (GET /openapi.json, GET /metrics).
 * The handler gets CORS, an OPTIONS preflight, and a 405 with Allow for
 * methods it does not list.
 */
export interface PlainHttpRoute {
  /** Literal path, "/metrics". */
  readonly path: string;
  /** Methods served, e.g. ["GET", "HEAD"]. */
  readonly methods: readonly string[];
  handle(request: NodeRequest, response: NodeResponse): void | Promise<void>;
}

export interface HttpHandlerOptions {
  readonly rpc: RpcRouter;
  /** Extra plain endpoints; their paths must not collide with the probes, REST routes or RPC paths. */
  readonly plainRoutes: readonly PlainHttpRoute[];
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
}

const RPC_METHODS = ["POST", "GET", "OPTIONS"];
const PROBE_METHODS = ["GET", "HEAD"];

/**
 * Routes every request of the port:
 * - /healthz and /readyz, the plain-HTTP probes;
 * - plain endpoints the application adds (/openapi.json, /metrics);
 * - the REST door's GET routes, read from the google.api.http annotations;
 * - the RPC paths (/sitediag.v1.DiagnosticsService/CheckSite, health,
 *   reflection) to Connect's handlers for Connect, gRPC and gRPC-Web;
 * - anything else: 404, as a JSON error envelope.
 * Every response carries the CORS headers; OPTIONS on a known path is a
 * preflight answer.
 */
export function createHttpHandler(options: HttpHandlerOptions): NodeRequestHandler {
  const { router, local } = options.rpc;
  const rpcHandlers = new Map<string, UniversalHandler>(router.handlers.map((handler) => [handler.requestPath, handler]));
  const restRoutes = new Map(restRoutesOf([...new Set(router.handlers.map((handler) => handler.service))]).map((route) => [route.path, route]));
  for (const route of restRoutes.values()) {
    if (!local.serves(route.method)) throw new Error(`REST route ${route.path} has no in-memory implementation`);
  }
  const rest = createRestAdapter({ calls: local, onDefect: options.onDefect, admission: options.admission, maxRequestBytes: options.maxRequestBytes });
  const plainRoutes = new Map(options.plainRoutes.map((route) => [route.path, route]));
  for (const path of plainRoutes.keys()) {
    if (restRoutes.has(path) || rpcHandlers.has(path) || path === "/healthz" || path === "/readyz") throw new Error(`plain route ${path} collides with a built-in route`);
  }

  return (request, response) => {
    if (options.closing() && request.httpVersionMajor === 1) response.setHeader("connection", "close");
    const path = (request.url ?? "/").split("?", 1)[0] ?? "/";
    const method = request.method ?? "GET";
    const cors = options.cors.simpleHeaders();

    if (path === "/healthz" || path === "/readyz") {
      if (!PROBE_METHODS.includes(method)) return methodNotAllowed(response, PROBE_METHODS, cors, null);
      if (path === "/healthz") return sendJson(response, 200, { status: "alive" }, cors);
      options.ready().then(
        (ready) => sendJson(response, ready ? 200 : 503, { status: ready ? "ready" : "not_ready" }, cors),
        (reason: unknown) => failed(response, reason, options.onDefect),
      );
      return;
    }

    const plain = plainRoutes.get(path);
    if (plain !== undefined) {
      if (method === "OPTIONS") return sendEmpty(response, 204, options.cors.preflightHeaders([...plain.methods, "OPTIONS"]));
      if (!plain.methods.includes(method)) return methodNotAllowed(response, plain.methods, cors, null);
      cors.forEach((value, name) => response.setHeader(name, value));
      Promise.resolve()
        .then(() => plain.handle(request, response))
        .catch((reason: unknown) => failed(response, reason, options.onDefect));
      return;
    }

    const route = restRoutes.get(path);
    if (route !== undefined) {
      const allowed = [route.verb, "OPTIONS"];
      if (method === "OPTIONS") return sendEmpty(response, 204, options.cors.preflightHeaders(allowed));
      if (method !== route.verb) return methodNotAllowed(response, allowed, cors, route.tool);
      rest(route, request, response, cors).catch((reason: unknown) => {
        // A client that hung up mid-body is not a server defect, and there is no one left to answer.
        if (!(reason instanceof RequestAbortedError)) failed(response, reason, options.onDefect);
      });
      return;
    }

    const rpc = rpcHandlers.get(path);
    if (rpc !== undefined) {
      if (method === "OPTIONS") return sendEmpty(response, 204, options.cors.preflightHeaders(RPC_METHODS));
      cors.forEach((value, name) => response.setHeader(name, value));
      const guarded = options.rpc.guarded.get(path);
      if (guarded === undefined || options.admission === undefined) return serveRpc(rpc, request, response, options.onDefect);
      serveAdmittedRpc(rpc, guarded, options.admission, request, response, options.onDefect);
      return;
    }

    const message = `no route for ${method} ${path}`;
    sendJson(response, 404, errorBody("not_found", message, metaFor(null)), cors);
  };
}

function serveRpc(handler: UniversalHandler, request: NodeRequest, response: NodeResponse, onDefect: (error: unknown) => void, refusal?: ConnectError): void {
  const universalRequest = universalRequestFromNodeRequest(request, response, undefined, callContextValues(request, doorOf(request)));
  // A refused call is still answered by Connect, so each protocol gets its own
  // error form (JSON, trailers); the error comes out of the body the moment
  // Connect starts reading it, and not one byte of the real body is read.
  // Otherwise Connect reads the body the doors' way (its own reader, never
  // started, would destroy the request when it stops at the size limit).
  const served = refusal === undefined ? Object.assign({}, universalRequest, { body: requestBody(request) }) : refusedRequest(universalRequest, refusal);
  handler(served)
    .then((universalResponse) => universalResponseToNodeResponse(universalResponse, response))
    .catch((reason: unknown) => {
      // A client that hung up mid-call is not a server defect.
      if (ConnectError.from(reason).code !== Code.Aborted) onDefect(reason);
    });
}

/** Admission first, from the headers alone; then the call, or Connect's answer for the refusal. */
function serveAdmittedRpc(
  handler: UniversalHandler,
  method: GuardedMethod,
  admission: Admission,
  request: NodeRequest,
  response: NodeResponse,
  onDefect: (error: unknown) => void,
): void {
  const key = request.headers[API_KEY_HEADER];
  admission.admit(request, doorOf(request), method.name, typeof key === "string" ? key : null, method.weight).then(
    (admitted) => {
      if (admitted.ok) {
        releaseWithAnswer(response, admitted.release);
        return serveRpc(handler, request, response, onDefect);
      }
      serveRpc(handler, request, response, onDefect, admitted.error);
    },
    (reason: unknown) => failed(response, reason, onDefect),
  );
}

function doorOf(request: NodeRequest) {
  const contentType = request.headers["content-type"];
  return rpcDoorOf(typeof contentType === "string" ? contentType : undefined);
}

/**
 * The request as Connect sees it when admission refused it: no length (Connect
 * would judge a declared length first, answering "too large" where the
 * answer is "who are you") and a body that throws the refusal when read.
 */
function refusedRequest(request: UniversalServerRequest, error: ConnectError): UniversalServerRequest {
  const header = new Headers(request.header);
  header.delete("content-length");
  const body: AsyncIterable<Uint8Array> = { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }) };
  return Object.assign({}, request, { header, body });
}

function methodNotAllowed(response: NodeResponse, allowed: readonly string[], cors: Headers, tool: string | null): void {
  cors.set("allow", allowed.join(", "));
  const message = `use ${allowed.filter((method) => method !== "OPTIONS").join(" or ")}`;
  // 405 has no Connect code of its own; unimplemented is the code for "this operation is not served".
  sendJson(response, 405, errorBody("unimplemented", message, metaFor(tool)), cors);
}

function failed(response: NodeResponse, reason: unknown, onDefect: (error: unknown) => void): void {
  onDefect(reason);
  // An answer already complete, or a response with no client left, has nothing to add.
  if (response.writableEnded || response.destroyed) return;
  if (response.headersSent) {
    response.destroy();
    return;
  }
  sendJson(response, 500, errorBody("internal", "the server failed to answer", metaFor(null)));
}
