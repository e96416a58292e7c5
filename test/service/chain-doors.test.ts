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
import { getChainPki } from "../fixtures/chain-certificates.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { createResponseValidator } from "../fixtures/response-validator.js";

// The whole chain under details, and certificate_expires_soon, on every door.
let expiringSoon: HttpTargets;
let expiredIntermediate: HttpTargets;
let service: TestService;
let dir: string;

beforeAll(async () => {
  const pki = await getChainPki();
  dir = mkdtempSync(join(tmpdir(), "sitediag-chain-"));
  writeFileSync(join(dir, "ca.pem"), pki.rootPem);
  expiringSoon = await startHttpTargets({ tls: pki.expiresIn5Days, routes: { "/": { kind: "respond", status: 200 } } });
  expiredIntermediate = await startHttpTargets({ tls: pki.expiredIntermediate, routes: { "/": { kind: "respond", status: 200 } } });
  service = await startTestService({
    config: { tracePorts: [expiringSoon.httpsPort ?? 0, expiredIntermediate.httpsPort ?? 0], caFile: join(dir, "ca.pem") },
  });
}, 60_000);

afterAll(async () => {
  await service?.close();
  await expiringSoon?.close();
  await expiredIntermediate?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function rest(path: "/api/v1/redirect-check" | "/api/v1/is-site-down", url: string, details: boolean): Promise<JsonObject> {
  const query = new URLSearchParams({ url, ...(details ? { details: "true" } : {}) });
  const response = await fetch(`${service.url}${path}?${query.toString()}`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as JsonObject;
  expect(createResponseValidator(openApiDocumentJson()).body(path, 200, body)).toEqual([]);
  return body["data"] as JsonObject;
}

function tlsOf(data: JsonObject, index = 0): JsonObject {
  const requests = (data["details"] as JsonObject)["requests"] as JsonObject[];
  return requests[index]?.["tls"] as JsonObject;
}

describe("the chain and its verification through REST and Connect", () => {
  it("REST redirect-check: certificate_expires_soon with and without details; with details the chain, its keys and algorithms", async () => {
    const url = expiringSoon.url("/", { secure: true });
    const plain = await rest("/api/v1/redirect-check", url, false);
    expect(plain["warnings"]).toEqual([
      { code: "certificate_expires_soon", hop: 1, severity: "warning", message: expect.stringContaining("expires in 5 days") as string },
    ]);
    const tls = tlsOf(await rest("/api/v1/redirect-check", url, true));
    const chain = tls["chain"] as JsonObject[];
    expect(
      chain.map((certificate) => [
        certificate["subject"],
        certificate["keyType"],
        certificate["keySize"],
        certificate["signatureAlgorithm"],
        certificate["daysRemaining"],
      ]),
    ).toEqual([
      ["localhost", "ec", 256, "sha256WithRSAEncryption", 5],
      ["sitediag chain intermediate", "rsa", 2048, "ecdsa-with-SHA256", expect.any(Number)],
      ["sitediag chain root", "ec", 256, "ecdsa-with-SHA256", expect.any(Number)],
    ]);
    expect(tls["verification"]).toEqual({ verified: true, failedAt: null, reason: null, more: 0 });
  });

  it("REST is-site-down: the expired intermediate is named as the failing link", async () => {
    const data = await rest("/api/v1/is-site-down", expiredIntermediate.url("/", { secure: true }), true);
    expect(data["status"]).toBe("down");
    const tls = tlsOf(data);
    expect(tls["verifyError"]).toBe("CERT_HAS_EXPIRED");
    expect(tls["verification"]).toEqual({ verified: false, failedAt: 1, reason: "expired", more: 0 });
    expect((tls["chain"] as JsonObject[])[1]?.["subject"]).toBe("expired chain intermediate");
  });

  it("SITEDIAG_CERT_EXPIRY_WARN_DAYS reaches a probe thread: under 3 days, a leaf with 5 left is no warning", async () => {
    const threaded = await startTestService({
      config: { tracePorts: [expiringSoon.httpsPort ?? 0], caFile: join(dir, "ca.pem"), probeThreads: 1, certExpiryWarnDays: 3 },
    });
    try {
      const query = new URLSearchParams({ url: expiringSoon.url("/", { secure: true }) });
      const body = (await (await fetch(`${threaded.url}/api/v1/redirect-check?${query.toString()}`)).json()) as JsonObject;
      expect((body["data"] as JsonObject)["warnings"]).toEqual([]);
    } finally {
      await threaded.close();
    }
  }, 60_000);

  it("Connect says the same", async () => {
    const client = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    const trace = renderMessage(
      TraceRedirectsResponseSchema,
      await client.traceRedirects({ url: expiringSoon.url("/", { secure: true }), details: true }),
    );
    expect((trace["warnings"] as JsonObject[]).map((warning) => warning["code"])).toEqual(["certificate_expires_soon"]);
    expect((tlsOf(trace)["chain"] as JsonObject[]).map((certificate) => certificate["subject"])).toEqual([
      "localhost",
      "sitediag chain intermediate",
      "sitediag chain root",
    ]);
    const check = renderMessage(
      CheckSiteResponseSchema,
      await client.checkSite({ url: expiredIntermediate.url("/", { secure: true }), details: true }),
    );
    expect(tlsOf(check)["verification"]).toEqual({ verified: false, failedAt: 1, reason: "expired", more: 0 });
  });
});
