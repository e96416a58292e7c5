import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";

// The body of `example` is the generated-client example of docs/api.md: the same
// calls, with the imports made dynamic and the base URL, target and key from the test.
async function example(baseUrl: string, target: string, apiKey: string) {
  // --- docs/api.md example starts ---
  const { createClient } = await import("@connectrpc/connect");
  const { createGrpcTransport } = await import("@connectrpc/connect-node");
  const { DiagnosticsService, SiteStatus } = await import("../../gen/sitediag/v1/diagnostics_pb.js");

  const transport = createGrpcTransport({ baseUrl }); // gRPC over h2c; createConnectTransport works too
  const client = createClient(DiagnosticsService, transport);

  const site = await client.checkSite({ url: target }, { headers: { "x-api-key": apiKey } });
  const verdict = site.status === SiteStatus.UP ? "up" : `down at ${site.failedStage}: ${site.reason}`;
  // --- docs/api.md example ends ---
  return { site, verdict };
}

describe("the generated client example of docs/api.md", () => {
  let targets: HttpTargets;
  let service: TestService;
  beforeAll(async () => {
    targets = await startHttpTargets({ routes: { "/": { kind: "respond", status: 200 } } });
    service = await startTestService();
  });
  afterAll(async () => {
    await service?.close();
    await targets?.close();
  });

  it("checks a site through the generated client", async () => {
    const { site, verdict } = await example(service.url, targets.url("/"), "sd_example");
    expect(verdict).toBe("up");
    expect(site.statusCode).toBe(200);
    expect(site.requestedUrl).toBe(targets.url("/"));
  });
});
