import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type RawTarget, startRawTarget } from "../fixtures/raw-targets.js";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";
import { sampleValue } from "../fixtures/prometheus-text.js";
import { until } from "../fixtures/until.js";

describe("SITEDIAG_MAX_INFLIGHT", () => {
  let silent: RawTarget;
  let service: ServeTestService;

  beforeAll(async () => {
    silent = await startRawTarget({ kind: "silent" });
    service = await startTestService({ as: "serve", config: { maxInflight: 2, siteTimeoutMs: 1_500 } });
  });
  afterAll(async () => {
    await service?.close();
    await silent?.close();
  });

  const policy = () => ({ budget: service.config.creditBudget, windowSeconds: service.config.creditWindowSeconds });

  it("answers 503 unavailable with Retry-After past the cap, on both doors, and charges nothing", async () => {
    const held = [1, 2].map(() =>
      fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(silent.url)}`, { headers: { "x-api-key": service.key } }),
    );
    await until(() => (silent.connections() >= 2 ? true : undefined), 5_000);
    expect((await service.store.usage(service.keyId, policy())).used).toBe(4);

    const rest = await fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(silent.url)}`, {
      headers: { "x-api-key": service.key },
    });
    expect(rest.status).toBe(503);
    expect(rest.headers.get("retry-after")).toBe("2");
    expect(((await rest.json()) as { error: { code: string } }).error.code).toBe("unavailable");

    const connect = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    const refused = await connect
      .checkSite({ url: silent.url }, { headers: { "x-api-key": service.key } })
      .catch((error: unknown) => ConnectError.from(error));
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.Unavailable);
    expect((refused as ConnectError).metadata.get("retry-after")).toBe("2");

    // Refused before the access interceptor: a bad key over the cap is a 503 too, not a 401.
    const anonymous = await fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(silent.url)}`);
    expect(anonymous.status).toBe(503);

    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(sampleValue(metrics, "sitediag_inflight_checks")).toBe(2);
    expect(sampleValue(metrics, "sitediag_inflight_rejections_total", { operation: "CheckSite" })).toBe(3);
    expect((await service.store.usage(service.keyId, policy())).used).toBe(4);

    const finished = await Promise.all(held);
    for (const response of finished) {
      expect(response.status).toBe(200);
      expect(((await response.json()) as { data: { status: string } }).data.status).toBe("down");
    }
    // Slots are given back: the next call runs and is charged.
    const after = await fetch(`${service.url}/api/v1/is-site-down?url=not a url`, { headers: { "x-api-key": service.key } });
    expect(after.status).toBe(400);
    expect((await service.store.usage(service.keyId, policy())).used).toBe(6);
  });
});
