import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { createGate } from "../fixtures/gate-interceptor.js";

describe("health and readiness", () => {
  let service: TestService;
  let storeUp = true;
  // Refuses every diagnostics call: health must not pass through it.
  const gate = createGate(() => new ConnectError("no key", Code.Unauthenticated));

  beforeAll(async () => {
    service = await startTestService({ interceptors: [gate.interceptor], ready: async () => storeUp });
  });
  afterAll(async () => {
    await service?.close();
  });

  const health = () => createClient(Health, createGrpcTransport({ baseUrl: service.url }));

  it("answers GET /healthz while the process runs, with no key", async () => {
    const response = await fetch(`${service.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "alive" });
  });

  it("flips /readyz and grpc.health.v1 with the store's readiness", async () => {
    storeUp = true;
    const ready = await fetch(`${service.url}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: "ready" }]);
    expect((await health().check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);

    storeUp = false;
    const notReady = await fetch(`${service.url}/readyz`);
    expect([notReady.status, await notReady.json()]).toEqual([503, { status: "not_ready" }]);
    expect((await health().check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);
    expect((await health().check({ service: "sitediag.v1.DiagnosticsService" })).status).toBe(
      HealthCheckResponse_ServingStatus.NOT_SERVING,
    );
    storeUp = true;
    expect((await health().check({ service: "sitediag.v1.DiagnosticsService" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect(gate.visits).toEqual([]);
  });

  it("answers an unknown service name with NOT_FOUND and Watch with UNIMPLEMENTED", async () => {
    const unknown = await health()
      .check({ service: "nope.v1.Nope" })
      .catch((error: unknown) => ConnectError.from(error));
    expect(unknown).toBeInstanceOf(ConnectError);
    expect((unknown as ConnectError).code).toBe(Code.NotFound);
    const watch = async () => {
      for await (const _ of health().watch({ service: "" })) return;
    };
    await expect(watch()).rejects.toMatchObject({ code: Code.Unimplemented });
  });

  it("reports not ready when the readiness check throws", async () => {
    const broken = await startTestService({ ready: () => Promise.reject(new Error("store gone")) });
    try {
      expect((await fetch(`${broken.url}/readyz`)).status).toBe(503);
    } finally {
      await broken.close();
    }
  });
});
