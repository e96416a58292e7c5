import { type ConnectRouter, createConnectRouter, type Interceptor } from "@connectrpc/connect";
import { compressionGzip } from "@connectrpc/connect-node";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { DiagnosticsService } from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { BATCH } from "../../limits.js";
import type { DiagnosticRunner } from "../../runner/diagnostic-runner.js";
import { createDiagnosticsService } from "../../service/diagnostics-service.js";
import { createDescriptorIndex } from "./descriptor-index.js";
import { createHealthService } from "./health-service.js";
import { createLocalCalls, type LocalCalls } from "../rest/local-calls.js";
import { reflectionServices, registerReflection } from "./reflection-service.js";

export interface RpcRouterOptions {
  readonly runner: DiagnosticRunner;
  /** Run around every DiagnosticsService call, whichever door it came through. */
  readonly interceptors: readonly Interceptor[];
  readonly ready: () => Promise<boolean>;
  /** Aborts the context signal of calls still running when the server shuts down. */
  readonly shutdownSignal: AbortSignal;
  /** Largest request message, as received and after decompression, on every protocol and method. */
  readonly maxRequestBytes: number;
}

export interface GuardedMethod {
  readonly name: string;
  /** In-flight slots a call holds: one, or for a batch as many items as it runs at once. */
  readonly weight: number;
}

export interface RpcRouter {
  /** Connect's router: the handlers of the Connect, gRPC and gRPC-Web doors. */
  readonly router: ConnectRouter;
  /** The same implementations and interceptors, called in memory: the REST door's way in. */
  readonly local: LocalCalls;
  /** Request paths of the methods that need admission (a key and in-flight slots): method name and the slots a call holds. */
  readonly guarded: ReadonlyMap<string, GuardedMethod>;
}

/**
 * The one set of services behind every door. The Connect, gRPC and gRPC-Web
 * protocols call the router's handlers; the REST door calls the very same
 * implementation through the very same interceptors in memory, so each door
 * gets the same answers without the REST door paying for a protocol
 * round trip. Health and reflection are registered without the
 * interceptors: they need no key and cost nothing.
 */
export function createRpcRouter(options: RpcRouterOptions): RpcRouter {
  const router = createConnectRouter({
    // gzip is what gRPC and Connect clients send when they compress at all;
    // every other algorithm would only be another inflater for an attacker.
    acceptCompression: [compressionGzip],
    // Enforced by Connect while reading (on the length header before any
    // buffering, then on the bytes) and by zlib while inflating
    // (maxOutputLength), for unary and streaming methods alike, reflection too.
    readMaxBytes: options.maxRequestBytes,
    shutdownSignal: options.shutdownSignal,
  });
  const local = createLocalCalls(options.shutdownSignal);
  const diagnostics = createDiagnosticsService(options.runner);
  const interceptors = [...options.interceptors];
  router.service(DiagnosticsService, diagnostics, { interceptors });
  local.service(DiagnosticsService, diagnostics, interceptors);
  const healthChecked = [DiagnosticsService.typeName, Health.typeName];
  router.service(Health, createHealthService(healthChecked, options.ready));
  // Reflection describes every service registered before it, and itself.
  const registered = new Set(router.handlers.map((handler) => handler.service));
  registerReflection(router, createDescriptorIndex([...registered, ...reflectionServices]));
  const guarded = new Map(
    router.handlers
      .filter((handler) => handler.service === DiagnosticsService)
      .map((handler) => [handler.requestPath, { name: handler.method.name, weight: handler.method.methodKind === "unary" ? 1 : BATCH.concurrency }]),
  );
  return { router, local, guarded };
}
