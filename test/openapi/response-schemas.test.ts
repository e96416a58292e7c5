import { beforeAll, describe, expect, it } from "vitest";
import { openApiDocumentJson } from "../../src/openapi/openapi-document.js";
import { createResponseValidator, type ResponseValidator } from "../fixtures/response-validator.js";

// Bodies written from the spec's tables (§2.1-2.3, §7), not from the document,
// so a document that drifted from the contract fails here. URLs are data only.
const SITE = "/api/v1/is-site-down";
const TRACE = "/api/v1/redirect-check";
const siteMeta = { tool: "is-site-down", version: "v1" };
const traceMeta = { tool: "redirect-check", version: "v1" };

const siteDown = {
  requestedUrl: "https://unresolvable.test/",
  finalUrl: null,
  status: "down",
  statusCode: null,
  statusText: null,
  responseTime: null,
  reason: "The host name did not resolve.",
  failedStage: "dns",
  redirectHops: null,
  proxyBlocked: false,
};
const siteUpAfterRedirect = {
  requestedUrl: "http://127.0.0.1:8080/old",
  finalUrl: "http://127.0.0.1:8080/new",
  status: "up",
  statusCode: 404,
  statusText: "Not Found",
  responseTime: 12,
  reason: null,
  failedStage: null,
  redirectHops: [{ url: "http://127.0.0.1:8080/old", status: 301 }],
  proxyBlocked: true,
};
const hop = {
  hop: 1,
  url: "http://127.0.0.1:8080/",
  hostname: "127.0.0.1",
  status: 301,
  statusText: "Moved Permanently",
  location: "https://127.0.0.1:8443/",
  redirectType: "301 Moved Permanently",
  responseTimeMs: 3,
  upgradedToHttps: true,
};
const traceLoop = {
  input: "http://127.0.0.1:8080/",
  redirects: 2,
  finalUrl: "http://127.0.0.1:8080/",
  finalStatus: null,
  totalTimeMs: 9,
  chainStatus: "Redirect loop",
  chain: [hop, { ...hop, hop: 2, url: "https://127.0.0.1:8443/", location: "http://127.0.0.1:8080/", upgradedToHttps: false }],
  warnings: [
    { code: "redirect_loop", message: "The chain returns to a URL it already visited.", hop: 2, severity: "problem" },
    { code: "https_downgrade", message: "Leaves HTTPS.", hop: null, severity: "problem" },
  ],
};
const traceHealthy = {
  input: "127.0.0.1",
  redirects: 0,
  finalUrl: "https://127.0.0.1/",
  finalStatus: 200,
  totalTimeMs: 4,
  chainStatus: "Healthy",
  chain: [{ ...hop, url: "https://127.0.0.1/", status: 200, statusText: "OK", location: null, redirectType: null, upgradedToHttps: false }],
  warnings: [],
};
const errorBody = (code: string, meta: object) => ({ ok: false, error: { code, message: "explained" }, meta });

let validator: ResponseValidator;
beforeAll(() => {
  validator = createResponseValidator(openApiDocumentJson());
});

describe("bodies that follow the spec validate", () => {
  it.each([
    ["a down site", SITE, { ok: true, data: siteDown, meta: siteMeta }],
    ["an up site after a redirect", SITE, { ok: true, data: siteUpAfterRedirect, meta: siteMeta }],
    ["a redirect loop with warnings", TRACE, { ok: true, data: traceLoop, meta: traceMeta }],
    ["a healthy single hop", TRACE, { ok: true, data: traceHealthy, meta: traceMeta }],
  ])("200: %s", (_name, path, body) => {
    expect(validator.body(path, 200, body)).toEqual([]);
  });

  it.each([
    [400, "invalid_argument"],
    [401, "unauthenticated"],
    [429, "resource_exhausted"],
    [500, "internal"],
    [501, "unimplemented"],
    [503, "unavailable"],
  ])("%i error envelope on both routes", (status, code) => {
    expect(validator.body(SITE, status, errorBody(code, siteMeta))).toEqual([]);
    expect(validator.body(TRACE, status, errorBody(code, traceMeta))).toEqual([]);
  });
});

describe("bodies that break the spec are rejected", () => {
  const { proxyBlocked: _dropped, ...siteWithoutProxyBlocked } = siteDown;
  it.each([
    ["a missing field", SITE, { ok: true, data: siteWithoutProxyBlocked, meta: siteMeta }, "proxyBlocked"],
    ["an unknown status string", SITE, { ok: true, data: { ...siteDown, status: "Down" }, meta: siteMeta }, "/data/status"],
    [
      "the proto name of an enum value",
      SITE,
      { ok: true, data: { ...siteDown, failedStage: "FAILED_STAGE_DNS" }, meta: siteMeta },
      "/data/failedStage",
    ],
    ["a field the spec does not name", SITE, { ok: true, data: { ...siteDown, extra: 1 }, meta: siteMeta }, "additional"],
    [
      "a non-integer status code",
      SITE,
      { ok: true, data: { ...siteUpAfterRedirect, statusCode: 200.5 }, meta: siteMeta },
      "/data/statusCode",
    ],
    [
      "a hop without its status",
      SITE,
      { ok: true, data: { ...siteUpAfterRedirect, redirectHops: [{ url: "http://127.0.0.1:8080/" }] }, meta: siteMeta },
      "/data/redirectHops/0",
    ],
    ["the other route's meta.tool", SITE, { ok: true, data: siteDown, meta: traceMeta }, "/meta/tool"],
    ["ok false on a 200", SITE, { ok: false, data: siteDown, meta: siteMeta }, "/ok"],
    [
      "null for a non-nullable final URL",
      TRACE,
      { ok: true, data: { ...traceHealthy, finalUrl: null }, meta: traceMeta },
      "/data/finalUrl",
    ],
    [
      "null instead of an empty warnings array",
      TRACE,
      { ok: true, data: { ...traceHealthy, warnings: null }, meta: traceMeta },
      "/data/warnings",
    ],
    [
      "a chain status in the wrong case",
      TRACE,
      { ok: true, data: { ...traceHealthy, chainStatus: "healthy" }, meta: traceMeta },
      "/data/chainStatus",
    ],
    [
      "a warning without hop",
      TRACE,
      { ok: true, data: { ...traceLoop, warnings: [{ code: "x", message: "y" }] }, meta: traceMeta },
      "/data/warnings/0",
    ],
  ])("200 with %s", (_name, path, body, where) => {
    const problems = validator.body(path, 200, body);
    expect(problems.join("\n")).toContain(where);
  });

  it("an error body on 200, a result body on 400 and an undocumented status", () => {
    expect(validator.body(SITE, 200, errorBody("internal", siteMeta))).not.toEqual([]);
    expect(validator.body(SITE, 400, { ok: true, data: siteDown, meta: siteMeta })).not.toEqual([]);
    expect(validator.body(SITE, 400, { ok: false, error: { code: "invalid_argument" }, meta: siteMeta })).not.toEqual([]);
    expect(validator.body(SITE, 418, errorBody("internal", siteMeta))).toEqual(["GET /api/v1/is-site-down has no documented 418 response"]);
  });
});

describe("usage headers", () => {
  const usage = {
    "RateLimit-Policy": '"credits";q=300;w=86400',
    RateLimit: '"credits";r=298;t=0',
    "X-RateLimit-Limit": "300",
    "X-RateLimit-Remaining": "298",
    "X-RateLimit-Used": "2",
    "X-RateLimit-Reset": "1767225600",
  };

  it("are required on 200 and 429, with Retry-After on a 429 only when waiting helps", () => {
    expect(validator.headers(SITE, 200, new Headers(usage))).toEqual([]);
    expect(validator.headers(TRACE, 429, new Headers({ ...usage, "Retry-After": "30" }))).toEqual([]);
    // A call costing more than the whole budget: no wait helps, so no Retry-After.
    expect(validator.headers(TRACE, 429, new Headers(usage))).toEqual([]);
    expect(validator.headers(TRACE, 429, new Headers({ ...usage, "Retry-After": "soon" }))).toHaveLength(1);
    expect(validator.headers(SITE, 200, new Headers({}))).toHaveLength(6);
  });

  it("are checked for their form", () => {
    const problems = validator.headers(SITE, 200, new Headers({ ...usage, RateLimit: "298", "X-RateLimit-Used": "two" }));
    expect(problems).toHaveLength(2);
  });

  it("Retry-After is optional on 503 but must be seconds when sent", () => {
    expect(validator.headers(SITE, 503, new Headers({}))).toEqual([]);
    expect(validator.headers(SITE, 503, new Headers({ "Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT" }))).toHaveLength(1);
  });
});
