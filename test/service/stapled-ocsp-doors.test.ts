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
import { getOcspFixture, type OcspFixture, startStaplingTarget, type StaplingTarget } from "../fixtures/ocsp-staples.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { createResponseValidator } from "../fixtures/response-validator.js";

// The stapled OCSP answer under details.requests[].tls.ocsp, and certificate_revoked, on REST and Connect.
let fixture: OcspFixture;
let revokedSite: StaplingTarget;
let plainSite: StaplingTarget;
let service: TestService;
let dir: string;

beforeAll(async () => {
  const pki = await getTestPki();
  fixture = await getOcspFixture();
  dir = mkdtempSync(join(tmpdir(), "sitediag-ocsp-doors-"));
  writeFileSync(join(dir, "ca.pem"), pki.caPem);
  revokedSite = await startStaplingTarget(fixture.revoked, fixture.answers.revoked);
  plainSite = await startStaplingTarget(fixture.good, null);
  const ports = [revokedSite.url, plainSite.url].map((url) => Number(new URL(url).port));
  service = await startTestService({ config: { tracePorts: ports, caFile: join(dir, "ca.pem") } });
});

afterAll(async () => {
  await service?.close();
  await revokedSite?.close();
  await plainSite?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function rest(tool: "is-site-down" | "redirect-check", url: string, details: boolean): Promise<JsonObject> {
  const query = new URLSearchParams({ url, ...(details ? { details: "true" } : {}) });
  const response = await fetch(`${service.url}/api/v1/${tool}?${query.toString()}`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as JsonObject;
  expect(createResponseValidator(openApiDocumentJson()).body(`/api/v1/${tool}`, 200, body)).toEqual([]);
  return body["data"] as JsonObject;
}

const ocspOf = (data: JsonObject, index = 0) =>
  ((((data["details"] as JsonObject)["requests"] as JsonObject[])[index] as JsonObject)["tls"] as JsonObject)["ocsp"];

const REVOKED = {
  status: "revoked",
  invalidReason: null,
  revocationReason: "keyCompromise",
  forLeaf: true,
  stale: false,
  signature: "verified",
  signatureNote: null,
};

describe("stapled OCSP through REST and Connect", () => {
  it("REST: revoked with its time, for the leaf, verified; certificate_revoked a problem on redirect-check, details or not", async () => {
    const checked = await rest("is-site-down", revokedSite.url, true);
    expect(checked["status"]).toBe("up");
    expect(ocspOf(checked)).toMatchObject({ ...REVOKED, revokedAt: fixture.revokedAt, sizeBytes: fixture.answers.revoked.length });
    const traced = await rest("redirect-check", revokedSite.url, true);
    expect(ocspOf(traced)).toMatchObject(REVOKED);
    const plain = await rest("redirect-check", revokedSite.url, false);
    expect(plain["warnings"]).toEqual([
      {
        code: "certificate_revoked",
        hop: 1,
        severity: "problem",
        message: expect.stringContaining("is revoked since 2026-01-01T00:00:00.000Z (keyCompromise)") as string,
      },
    ]);
  });

  it("REST: nothing stapled reads none, every optional field null", async () => {
    expect(ocspOf(await rest("is-site-down", plainSite.url, true))).toEqual({
      status: "none",
      invalidReason: null,
      revokedAt: null,
      revocationReason: null,
      producedAt: null,
      thisUpdate: null,
      nextUpdate: null,
      forLeaf: false,
      stale: false,
      signature: "unchecked",
      signatureNote: null,
      sizeBytes: 0,
    });
  });

  it("Connect says the same as REST", async () => {
    const client = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    const checked = renderMessage(CheckSiteResponseSchema, await client.checkSite({ url: revokedSite.url, details: true }));
    const viaRest = await rest("is-site-down", revokedSite.url, true);
    expect(ocspOf(checked)).toEqual(ocspOf(viaRest));
    const traced = await client.traceRedirects({ url: revokedSite.url });
    expect(traced.warnings.map((warning) => warning.code)).toEqual(["certificate_revoked"]);
    const tracedDetails = renderMessage(TraceRedirectsResponseSchema, await client.traceRedirects({ url: revokedSite.url, details: true }));
    expect(ocspOf(tracedDetails)).toMatchObject(REVOKED);
    expect(fixture.responder.contacts()).toBe(0);
  });
});
