import { Code, type ConnectRouter, ConnectError, createConnectRouter, type Interceptor, type ServiceImpl } from "@connectrpc/connect";
import { compressionGzip } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "../../../gen/grpc/health/v1/health_pb.js";
import { DiagnosticsService } from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { createDescriptorIndex } from "./descriptor-index.js";
import { reflectionServices, registerReflection } from "./reflection-service.js";

export interface RpcRouterOptions {
  /** The DiagnosticsService implementation every door calls. */
  readonly diagnostics: ServiceImpl<typeof DiagnosticsService>;
  /** Run around every DiagnosticsService call, whichever door it came through. */
  readonly interceptors: readonly Interceptor[];
  readonly ready: () => Promise<boolean>;
  /** Aborts the context signal of calls still running when the server shuts down. */
  readonly shutdownSignal: AbortSignal;
  /** Largest request message, as received and after decompression, on every protocol and method. */
  readonly maxRequestBytes: number;
}

/**
 * Connect's router for the Connect, gRPC and gRPC-Web doors: the
 * DiagnosticsService with the interceptors (the REST door calls the very same
 * implementation through the very same interceptors in memory, rest/local-calls.ts),
 * and health and reflection without them: they need no key and cost nothing.
 */
export function createRpcRouter(options: RpcRouterOptions): ConnectRouter {
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
  router.service(DiagnosticsService, options.diagnostics, { interceptors: [...options.interceptors] });
  const healthChecked = [DiagnosticsService.typeName, Health.typeName];
  router.service(Health, createHealthService(healthChecked, options.ready));
  // Reflection describes every service registered before it, and itself.
  const registered = new Set(router.handlers.map((handler) => handler.service));
  registerReflection(router, createDescriptorIndex([...registered, ...reflectionServices]));
  return router;
}

/**
 * grpc.health.v1.Health: the empty name asks about the whole server, a
 * registered service name about that service (all of ours share one
 * readiness: the store), any other name is NOT_FOUND as the protocol asks.
 * Watch is left out, so the router answers it with UNIMPLEMENTED.
 */
function createHealthService(serviceNames: readonly string[], ready: () => Promise<boolean>): Partial<ServiceImpl<typeof Health>> {
  return {
    check: async (request) => {
      if (request.service !== "" && !serviceNames.includes(request.service)) {
        throw new ConnectError(`unknown service ${request.service}`, Code.NotFound);
      }
      const serving = await ready();
      return { status: serving ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING };
    },
  };
}
