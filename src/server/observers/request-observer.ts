import { sharedClockMs } from "../../probe/clock.js";
import { Code } from "@connectrpc/connect";
import { codeFromHttpStatus, codeToString } from "@connectrpc/connect/protocol-connect";
import { DiagnosticsService } from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { type Door, rpcDoorOf } from "../rpc/door.js";
import type { NodeRequestHandler } from "../listener/dual-protocol-listener.js";
import { restRoutesOf } from "../rest/rest-routes.js";
import { attachCallRecord, type CallRecord } from "./call-record.js";
import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import { hostOf, redactUrl, REQUEST_ID_HEADER, requestIdFrom } from "../../observability/redaction.js";

export interface RequestObserverDeps {
  readonly logger: Logger;
  readonly metrics: Pick<Metrics, "requests">;
}

/** Paths polled by orchestrators and scrapers: logged at debug, so they do not drown the calls. */
const QUIET_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

/**
 * Wraps the port's request handler: gives every request an id (the caller's
 * sane x-request-id, else a new one) and echoes it on the response, whatever
 * the door; runs the handler with a call record the interceptors fill in;
 * and when the response is over writes one log line and, for diagnostic
 * calls, counts the request by door, operation and outcome code.
 */
export function observeRequests(handler: NodeRequestHandler, deps: RequestObserverDeps): NodeRequestHandler {
  const diagnosticPaths = diagnosticPathsOf();
  return (request, response) => {
    const record: CallRecord = {
      requestId: requestIdFrom(request.headers[REQUEST_ID_HEADER]),
      startedAt: process.hrtime.bigint(),
      door: undefined,
      operation: undefined,
      outcome: undefined,
      target: null,
      timeoutsFrom: sharedClockMs(),
    };
    // Set before the handler runs, so it survives into every door's response head (writeHead merges).
    response.setHeader(REQUEST_ID_HEADER, record.requestId);
    const target = request.url ?? "/";
    const path = target.split("?", 1)[0] ?? "/";
    response.once("close", () => {
      const finished = response.writableFinished;
      const status = response.statusCode;
      const known = diagnosticPaths.get(path);
      const door = record.door ?? (known?.door === "rest" ? "rest" : known === undefined ? undefined : rpcDoorOf(headerText(request.headers["content-type"])));
      const operation = record.operation ?? known?.operation;
      const outcome = record.outcome ?? fallbackOutcome(finished, status, door);
      if (door !== undefined && operation !== undefined) deps.metrics.requests.inc({ door, operation, code: outcome });
      const level = QUIET_PATHS.has(path) && outcome === "ok" ? "debug" : "info";
      // Redacting the URL parses it; no need when the line would be dropped (LOG_LEVEL=warn and above).
      if (!deps.logger.isLevelEnabled(level)) return;
      const line = {
        requestId: record.requestId,
        door: door ?? null,
        operation: operation ?? null,
        outcome,
        status,
        durationMs: Number((process.hrtime.bigint() - record.startedAt) / 1000n) / 1000,
        targetHost: record.target === null ? null : hostOf(record.target),
        method: request.method,
        url: redactUrl(target),
        httpVersion: request.httpVersion,
      };
      deps.logger[level](line, finished ? "request" : "request abandoned by the client");
    });
    attachCallRecord(request, record);
    handler(request, response);
  };
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

/** The HTTP paths of DiagnosticsService on each door, for calls refused before any interceptor ran. */
function diagnosticPathsOf(): ReadonlyMap<string, { readonly door: "rest" | "rpc"; readonly operation: string }> {
  const paths = new Map<string, { readonly door: "rest" | "rpc"; readonly operation: string }>();
  for (const route of restRoutesOf([DiagnosticsService])) paths.set(route.path, { door: "rest", operation: route.method.name });
  for (const method of DiagnosticsService.methods) paths.set(`/${DiagnosticsService.typeName}/${method.name}`, { door: "rpc", operation: method.name });
  return paths;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
