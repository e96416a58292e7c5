import { setMaxListeners } from "node:events";
import type { Interceptor } from "@connectrpc/connect";
import { type Config, DEFAULT_INTAKE } from "../config.js";
import { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { DiagnosticRunner } from "../runner/diagnostic-runner.js";
import { createDiagnosticsService } from "../service/diagnostics-service.js";
import type { VantageService } from "../service/vantage-answer.js";
import { type Admission, arrivalNow, type DoorHandler } from "./door/call-intake.js";
import { requestTargetOf } from "./door/request-target.js";
import { createCorsPolicy } from "./door/cors-policy.js";
import { baseUrlOf, type ConnectionLimits, listenDualProtocol, type NodeRequestHandler } from "./door/dual-protocol-listener.js";
import { createRouteTable, type PlainHttpRoute, type RouteTable } from "./door/route-table.js";
import { createHttpHandler } from "./http-handler.js";
import { isReady, type ReadinessCheck } from "./ops/plain-routes.js";
import { createLocalCalls } from "./rest/local-calls.js";
import { createRpcRouter } from "./rpc/rpc-router.js";

export type { PlainHttpRoute } from "./door/route-table.js";

export interface ServerOptions {
  /** HOST and PORT come from here (port 0 picks a free one). */
  readonly config: Pick<Config, "host" | "port">;
  /** Where the diagnostics run (in this process, or on probe threads), with the limits in force. */
  readonly runner: DiagnosticRunner;
  /** Where a call naming vantages goes; default: the one vantage of this process, `local`, on `runner`. */
  readonly vantages?: Partial<VantageService>;
  /**
   * Run around every DiagnosticsService call on every door (REST, Connect,
   * gRPC, gRPC-Web), in order: authentication, credits, limits. Health and
   * reflection never pass through them.
   */
  readonly interceptors?: readonly Interceptor[];
  /** Store reachable and accepting: drives /readyz and grpc.health.v1. Default: always ready. */
  readonly ready?: ReadinessCheck;
  /** Response headers browsers may read besides Retry-After (the usage headers). */
  readonly exposeHeaders?: readonly string[];
  /** How long close() lets open requests finish before cutting connections. Default 30 s, the longest diagnostic. */
  readonly shutdownGraceMs?: number;
  /** Plain HTTP endpoints beside the doors (GET /openapi.json, GET /metrics); no key, no interceptors. */
  readonly plainRoutes?: readonly PlainHttpRoute[];
  /** Connection and request limits; defaults suit a public endpoint. */
  readonly limits?: Partial<ServerLimits>;
  /**
   * Wraps the port's request handler, outermost (request ids, access logs,
   * request metrics): it gives each request its arrival, and may ask the
   * route table what a path is. Default: a bare arrival, no id.
   */
  readonly wrapHandler?: (door: DoorHandler, routes: RouteTable) => NodeRequestHandler;
  /** Told about the server's own defects (a handler that threw something unexpected). Default: stderr. */
  readonly onDefect?: (error: unknown) => void;
  /**
   * Judges every DiagnosticsService call from its headers (in-flight slot,
   * key) before its body is read, on every door. Default: none, every call
   * goes on to the interceptors.
   */
  readonly admission?: Admission;
}

export interface RunningServer {
  /** Base URL to reach the server ("http://127.0.0.1:8080"). */
  readonly url: string;
  readonly port: number;
  /**
   * Graceful stop: refuses new connections (before it returns), reports not
   * ready, lets open calls finish within the grace period, then aborts what is left.
   */
  close(): Promise<void>;
}

export interface ServerLimits extends ConnectionLimits {
  /** Longest request target (path and query) served; longer ones get 414. */
  readonly maxUrlBytes: number;
  /** Largest request message on the RPC doors, as received and after decompression (SITEDIAG_MAX_REQUEST_BYTES). */
  readonly maxRequestBytes: number;
}

const DEFAULT_LIMITS: ServerLimits = {
  // The request target's 16 KiB plus the 16 KiB Node allows a head by default, so
  // a target within its own limit is never cut off by the head limit first.
  maxHeaderBytes: 32 * 1024,
  // Every url the HTTP layer holds reaches the diagnostic, which judges it (a
  // charged 400 in its operation's envelope); percent-encoding can triple a
  // 2,048-character url, and 16 KiB leaves room for that and the rest of a query.
  maxUrlBytes: 16 * 1024,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  // Longer than the longest diagnostic (30 s), during which a call moves no bytes.
  http2IdleTimeoutMs: 120_000,
  maxRequestBytes: DEFAULT_INTAKE.maxRequestBytes,
  requestTimeoutMs: DEFAULT_INTAKE.requestTimeoutMs,
  http2MaxStreams: DEFAULT_INTAKE.http2MaxStreams,
  http2SessionMemoryMiB: DEFAULT_INTAKE.http2SessionMemoryMiB,
  maxConnections: DEFAULT_INTAKE.maxConnections,
  maxConnectionsPerPeer: DEFAULT_INTAKE.maxConnectionsPerPeer,
};
const READINESS_TIMEOUT_MS = 2_000;

/** Starts the service on one port for every door: REST, Connect, gRPC (h2c), gRPC-Web, health, reflection. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  let closing = false;
  const shutdown = new AbortController();
  // Every running call, on every door, links its own signal to this one for
  // as long as it runs (Connect's handler context), and unlinks when it ends.
  // So the listener count is the number of calls in flight, by design, not a
  // leak; Node's default cap of 10 would warn whenever 11 calls overlap.
  setMaxListeners(0, shutdown.signal);
  const readiness = options.ready ?? (async () => true);
  const ready = () => isReady(readiness, closing, READINESS_TIMEOUT_MS);
  const onDefect = options.onDefect ?? ((error: unknown) => console.error("sitediag: server defect", error));

  const limits = Object.assign({}, DEFAULT_LIMITS, options.limits);
  const interceptors = [...(options.interceptors ?? [])];
  const diagnostics = createDiagnosticsService(options.runner, options.vantages);
  const router = createRpcRouter({
    diagnostics,
    interceptors,
    ready,
    shutdownSignal: shutdown.signal,
    maxRequestBytes: limits.maxRequestBytes,
  });
  // The REST door's way in: the very implementation and interceptors the RPC doors serve, called in memory.
  const local = createLocalCalls(shutdown.signal);
  local.service(DiagnosticsService, diagnostics, interceptors);
  const routes = createRouteTable({
    rpcHandlers: router.handlers,
    diagnostics: DiagnosticsService,
    plainRoutes: options.plainRoutes ?? [],
  });
  const door = createHttpHandler({
    routes,
    local,
    cors: createCorsPolicy(options.exposeHeaders ?? []),
    ready,
    closing: () => closing,
    onDefect,
    admission: options.admission,
    maxRequestBytes: limits.maxRequestBytes,
    maxUrlBytes: limits.maxUrlBytes,
  });
  const handler =
    options.wrapHandler?.(door, routes) ??
    ((request, response) => door(request, response, arrivalNow(requestTargetOf(request.url ?? "/"))));
  const listener = await listenDualProtocol(
    Object.assign({}, limits, {
      host: options.config.host,
      port: options.config.port,
      handler,
      toolOfPath: routes.toolOf,
    }),
  );

  let closed: Promise<void> | undefined;
  return {
    url: baseUrlOf(listener.address, listener.port),
    port: listener.port,
    close: () => {
      closed ??= (async () => {
        closing = true;
        const grace = setTimeout(() => {
          shutdown.abort();
          listener.destroyAll();
        }, options.shutdownGraceMs ?? 30_000);
        await listener.close();
        clearTimeout(grace);
      })();
      return closed;
    },
  };
}
