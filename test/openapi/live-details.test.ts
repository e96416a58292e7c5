import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openApiDocumentJson } from "../../src/openapi/openapi-document.js";
import { closedLoopbackPort, startHttpTargets, type HttpTargets } from "../fixtures/http-targets.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { createResponseValidator, type ResponseValidator } from "../fixtures/response-validator.js";

// Responses with details=true from the running server, validated against the
// schema the document gives: every field of `details` as it really comes.
const SITE = "/api/v1/is-site-down";
const TRACE = "/api/v1/redirect-check";

let targets: HttpTargets;
let expired: HttpTargets;
let service: TestService;
let validator: ResponseValidator;
let closedPort: number;

beforeAll(async () => {
  const pki = await getTestPki();
  targets = await startHttpTargets({
    routes: {
      "/old": { kind: "redirect", status: 301, location: "/new" },
      "/new": { kind: "respond", status: 200, headers: { refresh: "0; url=/later" } },
      "/challenge": { kind: "respond", status: 403, headers: { "cf-ray": "1-AMS", "cf-mitigated": "challenge" } },
      "/broken": { kind: "respond", status: 503 },
    },
  });
  expired = await startHttpTargets({ tls: pki.expired });
  closedPort = await closedLoopbackPort();
  service = await startTestService({ config: { tracePorts: [targets.httpPort, expired.httpsPort ?? 0] } });
  validator = createResponseValidator(openApiDocumentJson());
});

afterAll(async () => {
  await service?.close();
  await targets?.close();
  await expired?.close();
});

describe("responses with details match the document", () => {
  it.each([
    ["a redirected site check with a Refresh header", SITE, () => targets.url("/old")],
    ["a challenged site check", SITE, () => targets.url("/challenge")],
    ["a site answering 503", SITE, () => targets.url("/broken")],
    ["a refused connection", SITE, () => `http://127.0.0.1:${closedPort}/`],
    ["an expired certificate", SITE, () => `https://127.0.0.1:${expired.httpsPort}/`],
    ["a redirect trace with a Refresh header", TRACE, () => targets.url("/old")],
    ["a trace to an expired certificate", TRACE, () => `https://127.0.0.1:${expired.httpsPort}/`],
  ] as const)("%s", async (_name, path, url) => {
    const response = await fetch(`${service.url}${path}?${new URLSearchParams({ url: url(), details: "true" }).toString()}`);
    const body = (await response.json()) as { data?: { details?: unknown } };
    expect(response.status).toBe(200);
    expect(body.data?.details).toBeDefined();
    expect(validator.body(path, response.status, body)).toEqual([]);
  });
});
