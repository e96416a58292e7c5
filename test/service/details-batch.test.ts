import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";

let targets: HttpTargets;
let service: TestService;

beforeAll(async () => {
  targets = await startHttpTargets({
    routes: {
      "/old": { kind: "redirect", status: 301, location: "/new" },
      "/new": { kind: "respond", status: 200 },
      "/broken": { kind: "respond", status: 503 },
    },
  });
  service = await startTestService({ config: { tracePorts: [targets.httpPort] } });
});

afterAll(async () => {
  await service?.close();
  await targets?.close();
});

describe("batches pass details through", () => {
  const client = () => createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));

  it("CheckSites: every item's result carries details only when asked", async () => {
    const urls = [targets.url("/old"), targets.url("/broken")];
    const codes = new Map<string, string | undefined>();
    for await (const item of client().checkSites({ urls, details: true })) {
      if (item.outcome.case !== "result") throw new Error("expected a result");
      codes.set(item.url, item.outcome.value.details?.code);
      expect(item.outcome.value.details?.requests.length).toBeGreaterThan(0);
    }
    expect(codes).toEqual(
      new Map([
        [targets.url("/old"), undefined],
        [targets.url("/broken"), "http_server_error"],
      ]),
    );
    for await (const item of client().checkSites({ urls })) {
      expect(item.outcome.case === "result" ? item.outcome.value.details : "no result").toBeUndefined();
    }
  });

  it("TraceRedirectsBatch: every item's result carries details only when asked", async () => {
    for await (const item of client().traceRedirectsBatch({ items: [{ url: targets.url("/old") }], details: true })) {
      if (item.outcome.case !== "result") throw new Error("expected a result");
      expect(item.outcome.value.details?.requests.map((request) => request.method)).toEqual(["HEAD", "HEAD", "GET"]);
    }
    for await (const item of client().traceRedirectsBatch({ items: [{ url: targets.url("/old") }] })) {
      expect(item.outcome.case === "result" ? item.outcome.value.details : "no result").toBeUndefined();
    }
  });

  it("the REST batch route takes details in its JSON body", async () => {
    const response = await fetch(`${service.url}/api/v1/batch/is-site-down`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ urls: [targets.url("/broken")], details: true }),
    });
    expect(response.status).toBe(200);
    const lines = (await response.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { data: { details?: { code: string } } });
    expect(lines.map((line) => line.data.details?.code)).toEqual(["http_server_error"]);
  });
});
