import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccessInterceptor } from "../../src/access/access-interceptor.js";
import { issueKey } from "../../src/access/issue-key.js";
import { openStore } from "../../src/access/open-store.js";
import type { AccessStore } from "../../src/access/store.js";
import { openApiDocumentJson } from "../../src/openapi/openapi-document.js";
import { startHttpTargets, type HttpTargets } from "../fixtures/http-targets.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { createResponseValidator, type ResponseValidator } from "../fixtures/response-validator.js";

// Real responses of the running server (real router, access layer on a real
// SQLite file, real diagnostics against loopback targets), each validated
// against the schema and headers the document gives for its status.
const SITE = "/api/v1/is-site-down";
const TRACE = "/api/v1/redirect-check";
// Small enough that the calls below run it out and meet a 429.
const BUDGET = 20;

let dir: string;
let store: AccessStore;
let targets: HttpTargets;
let service: TestService;
let key: string;
let validator: ResponseValidator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sitediag-openapi-live-"));
  store = await openStore({ kind: "sqlite", path: join(dir, "sitediag.db") });
  const issued = await issueKey(store, "openapi");
  if (issued === undefined) throw new Error("no key issued");
  key = issued.secret;
  targets = await startHttpTargets({
    routes: {
      "/": { kind: "respond", status: 200 },
      "/old": { kind: "redirect", status: 301, location: "/new" },
      "/new": { kind: "respond", status: 200 },
      "/broken": { kind: "respond", status: 503 },
    },
  });
  service = await startTestService({
    config: { tracePorts: [targets.httpPort] },
    interceptors: [createAccessInterceptor({ store, config: { creditBudget: BUDGET, creditWindowSeconds: 86_400 } })],
  });
  validator = createResponseValidator(openApiDocumentJson());
});

afterAll(async () => {
  await service?.close();
  await targets?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(path: string, query: Record<string, string>, withHeaderKey = true) {
  const response = await fetch(`${service.url}${path}?${new URLSearchParams(query).toString()}`, {
    headers: withHeaderKey ? { "x-api-key": key } : {},
  });
  const body: unknown = await response.json();
  return { status: response.status, headers: response.headers, body };
}

describe("responses of the running server match the document", () => {
  const seen: number[] = [];

  it.each([
    ["a redirected site check", SITE, () => ({ url: targets.url("/old") }), true],
    ["a site answering 503", SITE, () => ({ url: targets.url("/broken") }), true],
    ["a site check without url", SITE, () => ({}), true],
    ["a call without a key", SITE, () => ({ url: targets.url("/") }), false],
    ["a key in the query", SITE, () => ({ url: targets.url("/"), api_key: key }), false],
    ["a redirect trace", TRACE, () => ({ url: targets.url("/old") }), true],
    ["a trace on a direct page", TRACE, () => ({ url: targets.url("/") }), true],
    ["a trace over the budget", TRACE, () => ({ url: targets.url("/") }), true],
  ] as const)("%s", async (_name, path, query, withHeaderKey) => {
    const response = await call(path, query(), withHeaderKey);
    seen.push(response.status);
    expect(validator.body(path, response.status, response.body)).toEqual([]);
    expect(validator.headers(path, response.status, response.headers)).toEqual([]);
  });

  it("covered success, bad input, no key and an exhausted budget", () => {
    expect(seen).toEqual([200, 200, 400, 401, 200, 200, 200, 429]);
  });
});
