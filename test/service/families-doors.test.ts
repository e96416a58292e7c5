import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckSiteResponseSchema, DiagnosticsService, TraceRedirectsResponseSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { openApiDocumentJson } from "../../src/openapi/openapi-document.js";
import { renderMessage } from "../../src/server/rest/rest-render.js";
import { type FamilyTargets, startFamilyTargets } from "../fixtures/family-targets.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { createResponseValidator } from "../fixtures/response-validator.js";

// Both IP families of the first host, under details, on every door: a hosts file names dual.test on 127.0.0.1 and ::1.
let targets: FamilyTargets;
let service: TestService;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sitediag-families-"));
  writeFileSync(join(dir, "hosts"), "127.0.0.1 dual.test\n::1 dual.test\n");
  targets = await startFamilyTargets({ 4: { status: 503 }, 6: { status: 200 } });
  service = await startTestService({ config: { tracePorts: [targets.port], hostsFile: join(dir, "hosts") } });
});

afterAll(async () => {
  await service?.close();
  await targets?.close();
  rmSync(dir, { recursive: true, force: true });
});

const url = () => targets.url("/", "dual.test");

async function rest(route: "is-site-down" | "redirect-check", details: boolean): Promise<JsonObject> {
  const query = new URLSearchParams({ url: url(), ...(details ? { details: "true" } : {}) });
  const response = await fetch(`${service.url}/api/v1/${route}?${query.toString()}`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as JsonObject;
  expect(createResponseValidator(openApiDocumentJson()).body(`/api/v1/${route}`, 200, body)).toEqual([]);
  return body["data"] as JsonObject;
}

const DISAGREE = {
  code: "families_disagree",
  hop: 1,
  severity: "warning",
  message: expect.stringContaining("answers 200 over IPv6 (::1) but 503 over IPv4 (127.0.0.1)") as string,
};

describe("details.families through REST and Connect", () => {
  it("REST is-site-down: up with IPv6's 200; families and the warning under details only", async () => {
    const plain = await rest("is-site-down", false);
    expect(plain).toMatchObject({ status: "up", statusCode: 200 });
    expect("details" in plain).toBe(false);
    const data = await rest("is-site-down", true);
    expect(data).toMatchObject({ status: "up", statusCode: 200 });
    const details = data["details"] as JsonObject;
    expect(details["families"]).toMatchObject({
      pickedFamily: 6,
      otherFamily: 4,
      request: { url: url(), method: "GET", remoteAddress: "127.0.0.1", ipFamily: 4, status: 503, failure: null },
      refusedCode: null,
      refusedReason: null,
      statusDiffers: true,
      certificateDiffers: false,
    });
    expect(details["warnings"]).toEqual([DISAGREE]);
  });

  it("REST redirect-check: the warning in the trace's warnings and in details", async () => {
    const data = await rest("redirect-check", true);
    expect(data).toMatchObject({ chainStatus: "Healthy", finalStatus: 200 });
    expect(data["warnings"]).toEqual([DISAGREE]);
    expect((data["details"] as JsonObject)["warnings"]).toEqual([DISAGREE]);
    expect((data["details"] as JsonObject)["families"]).toMatchObject({ request: { method: "HEAD", status: 503 } });
    expect((await rest("redirect-check", false))["warnings"]).toEqual([]);
  });

  it("Connect says the same", async () => {
    const client = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    const check = renderMessage(CheckSiteResponseSchema, await client.checkSite({ url: url(), details: true }));
    expect((check["details"] as JsonObject)["families"]).toMatchObject({
      pickedFamily: 6,
      otherFamily: 4,
      request: { status: 503 },
      statusDiffers: true,
    });
    expect((check["details"] as JsonObject)["warnings"]).toEqual([DISAGREE]);
    const trace = renderMessage(TraceRedirectsResponseSchema, await client.traceRedirects({ url: url(), details: true }));
    expect(trace["warnings"]).toEqual([DISAGREE]);
  });
});
