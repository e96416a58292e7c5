import { Code } from "@connectrpc/connect";
import { codeFromHttpStatus, codeToString } from "@connectrpc/connect/protocol-connect";
import { arrivalNow, type Door, type DoorHandler, rpcDoorOf } from "../door/call-intake.js";
import type { NodeRequestHandler } from "../door/dual-protocol-listener.js";
import type { NodeRequest } from "../door/json-answer.js";
import { requestTargetOf } from "../door/request-target.js";
import type { RouteTable } from "../door/route-table.js";
import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import { hostOf, redactUrl, REQUEST_ID_HEADER, requestIdFrom } from "../../observability/redaction.js";

export interface RequestObserverDeps {
  readonly logger: Logger;
  readonly metrics: Pick<Metrics, "requests" | "overloadAnswers">;
}

/** Paths polled by orchestrators and scrapers: logged at debug, so they do not drown the calls. */
const QUIET_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

/**
 * Wraps the port's request handler: gives every request an id (the caller's
 * sane x-request-id, else a new one) and echoes it on the response, whatever
 * the door; hands the door the request's arrival, whose report the door and
 * the observing interceptor tell what became of the call; and when the
 * response is over writes one log line and, for diagnostic calls, counts the
 * request by door, operation and outcome code. Each diagnostic the call
 * answers as overload (a batch's items one by one) is counted as it is told.
 */
export function observeRequests(serve: DoorHandler, routes: RouteTable, deps: RequestObserverDeps): NodeRequestHandler {
  return (request, response) => {
    const target = requestTargetOf(request.url ?? "/");
    const { path } = target;
    const { door, operation } = diagnosticOf(routes, path, request);
    const arrival = arrivalNow(target, requestIdFrom(request.headers[REQUEST_ID_HEADER]), (overload) => {
      if (operation !== undefined) deps.metrics.overloadAnswers.inc({ operation, why: overload.why });
    });
    const startedAt = process.hrtime.bigint();
    const { report } = arrival;
    // Set before the handler runs, so it survives into every door's response head (writeHead merges).
    response.setHeader(REQUEST_ID_HEADER, arrival.id);
    response.once("close", () => {
      const finished = response.writableFinished;
      const status = response.statusCode;
      const outcome = report.outcome ?? fallbackOutcome(finished, status, door);
      if (door !== undefined && operation !== undefined) deps.metrics.requests.inc({ door, operation, code: outcome });
      const level = QUIET_PATHS.has(path) && outcome === "ok" ? "debug" : "info";
      // Redacting the URL parses it; no need when the line would be dropped (LOG_LEVEL=warn and above).
      if (!deps.logger.isLevelEnabled(level)) return;
      const line = {
        requestId: arrival.id,
        door: door ?? null,
        operation: operation ?? null,
        outcome,
        status,
        durationMs: Number((process.hrtime.bigint() - startedAt) / 1000n) / 1000,
        targetHost: report.target === null ? null : hostOf(report.target),
        method: request.method,
        url: redactUrl(target.raw),
        httpVersion: request.httpVersion,
      };
      deps.logger[level](line, finished ? "request" : "request abandoned by the client");
    });
    serve(request, response, arrival);
  };
}

/** The door and operation of a diagnostic path, as its Call names them (from the route table); none for any other path. */
function diagnosticOf(
  routes: RouteTable,
  path: string,
  request: NodeRequest,
): { readonly door: Door | undefined; readonly operation: string | undefined } {
  const route = routes.routeOf(path);
  if (route?.kind === "rest") return { door: "rest", operation: route.diagnostic.operation };
  if (route?.kind === "rpc" && route.diagnostic !== null)
    return { door: rpcDoorOf(request.headers["content-type"]), operation: route.diagnostic.operation };
  return { door: undefined, operation: undefined };
}

/**
 * The outcome of a request no interceptor saw: a plain endpoint, a route
 * error, or a call Connect refused before the interceptors (a bad content
 * type). For gRPC the HTTP status is 200 whatever happened, so it says
 * nothing and the outcome is unknown.
 */
function fallbackOutcome(finished: boolean, status: number, door: Door | undefined): string {
  if (!finished) return codeToString(Code.Canceled);
  if (door === "grpc" || door === "grpc-web") return status === 200 ? codeToString(Code.Unknown) : codeToString(codeFromHttpStatus(status));
  return status < 400 ? "ok" : codeToString(ROUTE_ERROR_CODES.get(status) ?? codeFromHttpStatus(status));
}

/** The codes the port's own JSON errors carry, where Connect's status mapping reads them differently (404 is not "unimplemented" here). */
const ROUTE_ERROR_CODES: ReadonlyMap<number, Code> = new Map([
  [404, Code.NotFound],
  [405, Code.Unimplemented],
  [414, Code.InvalidArgument],
  [431, Code.InvalidArgument],
]);
