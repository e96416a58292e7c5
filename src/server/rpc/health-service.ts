import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { type Health, HealthCheckResponse_ServingStatus } from "../../../gen/grpc/health/v1/health_pb.js";

/**
 * grpc.health.v1.Health: the empty name asks about the whole server, a
 * registered service name about that service (all of ours share one
 * readiness: the store), any other name is NOT_FOUND as the protocol asks.
 * Watch is left out, so the router answers it with UNIMPLEMENTED.
 */
export function createHealthService(serviceNames: readonly string[], ready: () => Promise<boolean>): Partial<ServiceImpl<typeof Health>> {
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
