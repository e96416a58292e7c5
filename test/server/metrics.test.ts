import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";
import { parseSamples, sampleValue } from "../fixtures/prometheus-text.js";

describe("GET /metrics", () => {
  let targets: HttpTargets;
  let service: ServeTestService;

  beforeAll(async () => {
    targets = await startHttpTargets({ routes: { "/up": { kind: "respond", status: 200 } } });
    // Budget 9: a check (2), a trace (5) and a check (2) fit; the next check is a 429.
    service = await startTestService({ as: "serve", config: { creditBudget: 9, tracePorts: [targets.httpPort] }, processMetrics: true });
  });
  afterAll(async () => {
    await service?.close();
    await targets?.close();
  });

  const scrape = async (base = service.url) => {
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/plain");
    return response.text();
  };

  it("counts calls by door, operation and code, with results, hops, credits and store latency", async () => {
    const checkUrl = `${service.url}/api/v1/is-site-down?url=${encodeURIComponent(targets.url("/up"))}`;
    expect((await fetch(checkUrl)).status).toBe(401);
    expect((await fetch(checkUrl, { headers: { "x-api-key": service.key } })).status).toBe(200);
    const connect = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    const trace = await connect.traceRedirects({ url: targets.url("/up") }, { headers: { "x-api-key": service.key } });
    expect(trace.finalStatus).toBe(200);
    const grpc = createClient(DiagnosticsService, createGrpcTransport({ baseUrl: service.url }));
    expect((await grpc.checkSite({ url: targets.url("/up") }, { headers: { "x-api-key": service.key } })).statusCode).toBe(200);
    expect((await fetch(checkUrl, { headers: { "x-api-key": service.key } })).status).toBe(429);

    const text = await scrape();
    const requests = (labels: Record<string, string>) => sampleValue(text, "sitediag_requests_total", labels);
    expect(requests({ door: "rest", operation: "CheckSite", code: "unauthenticated" })).toBe(1);
    expect(requests({ door: "rest", operation: "CheckSite", code: "ok" })).toBe(1);
    expect(requests({ door: "rest", operation: "CheckSite", code: "resource_exhausted" })).toBe(1);
    expect(requests({ door: "connect", operation: "TraceRedirects", code: "ok" })).toBe(1);
    expect(requests({ door: "grpc", operation: "CheckSite", code: "ok" })).toBe(1);

    expect(sampleValue(text, "sitediag_site_check_results_total", { status: "up", failed_stage: "none" })).toBe(2);
    expect(sampleValue(text, "sitediag_redirect_trace_results_total", { chain_status: "healthy" })).toBe(1);
    expect(sampleValue(text, "sitediag_diagnostic_duration_seconds_count", { operation: "CheckSite" })).toBe(2);
    expect(sampleValue(text, "sitediag_diagnostic_duration_seconds_count", { operation: "TraceRedirects" })).toBe(1);
    expect(sampleValue(text, "sitediag_outbound_hops_total", { outcome: "response", stage: "none" })).toBeGreaterThanOrEqual(3);

    expect(sampleValue(text, "sitediag_credit_charges_total", { decision: "admitted" })).toBe(3);
    expect(sampleValue(text, "sitediag_credit_charges_total", { decision: "rejected" })).toBe(1);
    expect(sampleValue(text, "sitediag_credits_charged_total")).toBe(9);
    expect(
      sampleValue(text, "sitediag_store_operation_duration_seconds_count", { store: "sqlite", operation: "charge", outcome: "ok" }),
    ).toBe(4);
    expect(sampleValue(text, "sitediag_inflight_checks")).toBe(0);

    // prom-client's default process metrics.
    expect(sampleValue(text, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    expect(parseSamples(text).some((sample) => sample.name.startsWith("nodejs_eventloop_lag"))).toBe(true);
  });

  it("never puts a URL, host, key or key id in a label", async () => {
    const text = await scrape();
    expect(text).not.toContain(service.key);
    expect(text).not.toContain(service.keyId);
    const labelValues = parseSamples(text).flatMap((sample) => Object.values(sample.labels));
    for (const value of labelValues) {
      expect(value).not.toMatch(/127\.0\.0\.1|:\/\/|sd_|key_/);
    }
  });

  it("serves /metrics without a key and counts no call for it", async () => {
    const before = await scrape();
    const after = await scrape();
    expect(sampleValue(after, "sitediag_credit_charges_total", { decision: "admitted" })).toBe(
      sampleValue(before, "sitediag_credit_charges_total", { decision: "admitted" }),
    );
  });

  it("moves /metrics to SITEDIAG_METRICS_PORT when it is set, off the main port", async () => {
    const separate = await startTestService({ as: "serve", config: { metricsPort: 0 } });
    try {
      expect(separate.metricsUrl).toBeDefined();
      expect((await fetch(`${separate.url}/metrics`)).status).toBe(404);
      const text = await scrape(separate.metricsUrl);
      expect(sampleValue(text, "sitediag_inflight_checks")).toBe(0);
      expect((await fetch(`${separate.metricsUrl}/api/v1/is-site-down`)).status).toBe(404);
    } finally {
      await separate.close();
    }
  });
});
