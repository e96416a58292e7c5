import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckSiteResponseSchema, DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { openApiDocumentJson } from "../../src/openapi/openapi-document.js";
import { renderMessage } from "../../src/server/rest/rest-render.js";
import { startDnsServer, type DnsServer } from "../fixtures/dns-server.js";
import { startHttpTargets, type HttpTargets } from "../fixtures/http-targets.js";
import { rdapDomain } from "../fixtures/rdap-answers.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { createResponseValidator } from "../fixtures/response-validator.js";

// details.registration on REST and Connect, valid against the OpenAPI document, from a service whose diagnostics run on a probe thread.
let dns: DnsServer;
let targets: HttpTargets;
let rdap: HttpTargets;
let service: TestService;
let dir: string;

beforeAll(async () => {
  const pki = await getTestPki();
  dns = await startDnsServer();
  dns.answer("www.doors.test", { a: ["127.0.0.1"] });
  targets = await startHttpTargets();
  targets.route("/ok", () => ({ kind: "respond", status: 200 }));
  rdap = await startHttpTargets({ tls: pki.valid });
  rdap.route("/rdap/domain/doors.test", { kind: "respond", status: 200, body: rdapDomain("doors.test", { status: ["server hold"] }) });
  dir = mkdtempSync(join(tmpdir(), "sitediag-rdap-doors-"));
  const caFile = join(dir, "ca.pem");
  writeFileSync(caFile, pki.caPem);
  const rdapBootstrapFile = join(dir, "dns.json");
  writeFileSync(rdapBootstrapFile, JSON.stringify({ services: [[["test"], [rdap.url("/rdap/", { secure: true })]]] }));
  service = await startTestService({ config: { dnsServers: [dns.server], caFile, rdapBootstrapFile, probeThreads: 1 } });
});

afterAll(async () => {
  await service?.close();
  await Promise.all([targets?.close(), rdap?.close(), dns?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const url = () => `http://www.doors.test:${targets.httpPort}/ok`;

async function rest(): Promise<JsonObject> {
  const response = await fetch(`${service.url}/api/v1/is-site-down?${new URLSearchParams({ url: url(), details: "true" }).toString()}`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as JsonObject;
  expect(createResponseValidator(openApiDocumentJson()).body("/api/v1/is-site-down", 200, body)).toEqual([]);
  return (body["data"] as JsonObject)["details"] as JsonObject;
}

/** Asked again while the registry's answer came after the check's short grace (the lookup it started fills the thread's cache). */
async function settledRest(): Promise<JsonObject> {
  for (let attempt = 1; ; attempt++) {
    const details = await rest();
    if ((details["registration"] as JsonObject | null)?.["unknownReason"] !== "unfinished" || attempt === 10) return details;
    await new Promise((wait) => setTimeout(wait, 200));
  }
}

describe("details.registration through the doors", () => {
  it("REST: the registration, its warnings by severity; Connect the same", async () => {
    const details = await settledRest();
    expect(details["registration"]).toEqual({
      domain: "doors.test",
      state: "found",
      unknownReason: null,
      rdapUrl: rdap.url("/rdap/domain/doors.test", { secure: true }),
      registrar: "Example Registrar, Inc.",
      created: "2001-02-03T04:05:06.000Z",
      expires: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) as unknown,
      status: ["server hold"],
      suspended: true,
    });
    expect((details["warnings"] as JsonObject[]).map(({ code, severity }) => [code, severity])).toEqual([
      ["domain_on_hold", "problem"],
      ["domain_expires_soon", "warning"],
    ]);
    const client = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    const check = renderMessage(CheckSiteResponseSchema, await client.checkSite({ url: url(), details: true }));
    expect((check["details"] as JsonObject)["registration"]).toEqual(details["registration"]);
  });
});
