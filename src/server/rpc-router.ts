import { type ConnectRouter, createConnectRouter, type Interceptor } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { DiagnosticEnv } from "../diagnostics/diagnostic-env.js";
import { createDiagnosticsService } from "../service/diagnostics-service.js";
import { createDescriptorIndex } from "./descriptor-index.js";
import { createHealthService } from "./health-service.js";
import { reflectionServices, registerReflection } from "./reflection-service.js";

export interface RpcRouterOptions {
  readonly env: DiagnosticEnv;
  /** Run around every DiagnosticsService call, whichever door it came through. */
  readonly interceptors: readonly Interceptor[];
  readonly ready: () => Promise<boolean>;
  /** Aborts the context signal of calls still running when the server shuts down. */
  readonly shutdownSignal: AbortSignal;
}

/**
 * The one router behind every door. The REST adapter and the Connect, gRPC
 * and gRPC-Web protocols all call its handlers, so the same interceptors and
 * the same implementation answer each of them. Health and reflection are
 * registered without the interceptors: they need no key and cost nothing.
 */
export function createRpcRouter(options: RpcRouterOptions): ConnectRouter {
  const router = createConnectRouter({
    acceptCompression: [compressionGzip, compressionBrotli],
    shutdownSignal: options.shutdownSignal,
  });
  router.service(DiagnosticsService, createDiagnosticsService(options.env), { interceptors: [...options.interceptors] });
  const healthChecked = [DiagnosticsService.typeName, Health.typeName];
  router.service(Health, createHealthService(healthChecked, options.ready));
  // Reflection describes every service registered before it, and itself.
  const registered = new Set(router.handlers.map((handler) => handler.service));
  registerReflection(router, createDescriptorIndex([...registered, ...reflectionServices]));
  return router;
}
