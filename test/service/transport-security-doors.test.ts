import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsService, TraceRedirectsResponseSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { openApiDocumentJson } from "../../src/openapi/openapi-document.js";
import { renderMessage } from "../../src/server/rest/rest-render.js";
import { type HttpTargets, startHttpTargets, type TargetRoute } from "../fixtures/http-targets.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { createResponseValidator } from "../fixtures/response-validator.js";

// Issue 32: each HTTPS answer's Strict-Transport-Security and Alt-Svc h3, under details, on every door.
let targets: HttpTargets;
let service: TestService;
let dir: string;

beforeAll(async () => {
  const pki = await getTestPki();
  dir = mkdtempSync(join(tmpdir(), "sitediag-hsts-"));
  writeFileSync(join(dir, "ca.pem"), pki.caPem);
  targets = await startHttpTargets({ tls: pki.valid });
  targets.route(
    "/up",
    (request): TargetRoute =>
      request.secure
        ? {
            kind: "respond",
            status: 200,
            headers: { "strict-transport-security": "max-age=600; includeSubDomains", "alt-svc": 'h3=":443"; ma=60' },
          }
        : { kind: "redirect", status: 301, location: targets.url("/up", { secure: true }) },
  );
  service = await startTestService({ config: { tracePorts: [targets.httpPort, targets.httpsPort ?? 0], caFile: join(dir, "ca.pem") } });
});

afterAll(async () => {
  await service?.close();
  await targets?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function restTrace(details: boolean): Promise<JsonObject> {
  const query = new URLSearchParams({ url: targets.url("/up"), ...(details ? { details: "true" } : {}) });
  const response = await fetch(`${service.url}/api/v1/redirect-check?${query.toString()}`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as JsonObject;
  if (details) expect(createResponseValidator(openApiDocumentJson()).body("/api/v1/redirect-check", 200, body)).toEqual([]);
  return body["data"] as JsonObject;
}

describe("transportSecurity through REST and Connect", () => {
  it("REST, details=true: null on the http:// hop, the policy and h3 on each HTTPS answer; hsts_short without details too", async () => {
    const plain = await restTrace(false);
    expect(plain["warnings"]).toEqual([
      { code: "hsts_short", hop: 2, severity: "info", message: expect.stringContaining("max-age=600") as string },
    ]);
    const data = await restTrace(true);
    const requests = (data["details"] as JsonObject)["requests"] as JsonObject[];
    const expected = { hsts: { maxAge: 600, includeSubDomains: true, preload: false }, hstsInvalid: false, h3Advertised: true };
    expect(requests.map((request) => request["transportSecurity"])).toEqual([null, expected, expected]);
  });

  it("Connect says the same", async () => {
    const client = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    const answer = renderMessage(TraceRedirectsResponseSchema, await client.traceRedirects({ url: targets.url("/up"), details: true }));
    const requests = ((answer["details"] as JsonObject)["requests"] as JsonObject[]).map((request) => request["transportSecurity"]);
    expect(requests).toEqual(
      (((await restTrace(true))["details"] as JsonObject)["requests"] as JsonObject[]).map((request) => request["transportSecurity"]),
    );
  });
});
