import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SiteCheckResult } from "../../src/diagnostics/site-check-result.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type TestEnv, createTestEnv, checkedResult, checkSite, REPORTED } from "../fixtures/test-env.js";

let targets: HttpTargets;
let env: TestEnv;

beforeAll(async () => {
  targets = await startHttpTargets();
  env = createTestEnv({ siteTimeoutMs: 2_000 });
});

afterAll(async () => {
  await env.close();
  await targets.close();
});

function check(raw: string): Promise<SiteCheckResult> {
  return checkedResult(raw, env);
}

/** As the CLI asks: details with every request's report facts. */
function reported(raw: string): Promise<SiteCheckResult> {
  return checkedResult(raw, env, REPORTED);
}

function requestsTo(path: string): number {
  return targets.requests.filter((request) => new URL(request.target, "http://x").pathname === path).length;
}

describe("site check: status classification", () => {
  it.each([
    [200, "OK"],
    [204, "No Content"],
    [401, "Unauthorized"],
    [403, "Forbidden"],
    [404, "Not Found"],
  ])("a direct %i is up, with every field of the contract", async (status, statusText) => {
    targets.route(`/status/${status}`, { kind: "respond", status });
    const url = targets.url(`/status/${status}`);
    const result = await reported(url);
    expect(result).toMatchObject({
      requestedUrl: url,
      finalUrl: url,
      status: "up",
      statusCode: status,
      statusText,
      reason: null,
      failedStage: null,
      redirectHops: null,
      proxyBlocked: false,
      proxyProvider: null,
    });
    expect(Number.isInteger(result.responseTime)).toBe(true);
    expect(result.responseTime).toBeGreaterThanOrEqual(0);
    expect(result.details?.requests).toHaveLength(1);
  });

  it.each([
    [500, "Internal Server Error"],
    [502, "Bad Gateway"],
    [503, "Service Unavailable"],
  ])("a %i is down at the http stage and says what the server returned", async (status, statusText) => {
    targets.route(`/status/${status}`, { kind: "respond", status });
    const url = targets.url(`/status/${status}`);
    const result = await check(url);
    expect(result).toMatchObject({
      finalUrl: url,
      status: "down",
      statusCode: status,
      statusText,
      reason: `Server returned ${status} ${statusText}`,
      failedStage: "http",
      redirectHops: null,
      proxyBlocked: false,
    });
    expect(Number.isInteger(result.responseTime)).toBe(true);
  });

  it("reports the server's own reason phrase", async () => {
    targets.route("/phrase", { kind: "respond", status: 503, statusText: "Back Soon" });
    const result = await check(targets.url("/phrase"));
    expect(result).toMatchObject({ statusText: "Back Soon", reason: "Server returned 503 Back Soon" });
  });

  it("echoes the caller's string, not a re-serialisation", async () => {
    targets.route("/echo", { kind: "respond", status: 200 });
    const raw = targets.url("/echo").replace("http://", "HTTP://");
    const result = await check(raw);
    expect(result.requestedUrl).toBe(raw);
    expect(result.finalUrl).toBe(targets.url("/echo"));
  });

  it("checks an IPv6 literal", async () => {
    const v6 = await startHttpTargets({ host: "::1", routes: { "/": { kind: "respond", status: 200 } } });
    try {
      const url = v6.url("/");
      expect(url).toMatch(/^http:\/\/\[::1\]:\d+\/$/);
      expect(await check(url)).toMatchObject({ status: "up", statusCode: 200, finalUrl: url });
    } finally {
      await v6.close();
    }
  });

  it("sends a GET", async () => {
    targets.route("/method", { kind: "respond", status: 200 });
    await check(targets.url("/method"));
    expect(targets.requests.filter((request) => request.target === "/method").map((request) => request.method)).toEqual(["GET"]);
  });
});

describe("site check: redirects", () => {
  it("follows a 301 to a 200: up, with the redirect listed", async () => {
    targets.route("/moved", { kind: "redirect", status: 301, location: "/landing" });
    targets.route("/landing", { kind: "respond", status: 200 });
    const result = await check(targets.url("/moved"));
    expect(result).toMatchObject({
      finalUrl: targets.url("/landing"),
      status: "up",
      statusCode: 200,
      statusText: "OK",
      reason: null,
      failedStage: null,
      redirectHops: [{ url: targets.url("/moved"), status: 301 }],
    });
  });

  it.each([1, 2, 3, 4])("follows a chain of %i redirects and lists each one", async (length) => {
    const statuses = [301, 302, 303, 307, 308];
    for (let i = 0; i < length; i++) {
      targets.route(`/chain${length}/${i}`, { kind: "redirect", status: statuses[i] ?? 302, location: `/chain${length}/${i + 1}` });
    }
    targets.route(`/chain${length}/${length}`, { kind: "respond", status: 200 });
    const result = await reported(targets.url(`/chain${length}/0`));
    expect(result.status).toBe("up");
    expect(result.finalUrl).toBe(targets.url(`/chain${length}/${length}`));
    expect(result.redirectHops).toEqual(
      Array.from({ length }, (_, i) => ({ url: targets.url(`/chain${length}/${i}`), status: statuses[i] })),
    );
    expect(result.details?.requests).toHaveLength(length + 1);
  });

  it("without details (as the service asks), the same result but no request records", async () => {
    for (let i = 0; i < 2; i++) targets.route(`/lean/${i}`, { kind: "redirect", status: 301, location: `/lean/${i + 1}` });
    targets.route("/lean/2", { kind: "respond", status: 200 });
    const full = await reported(targets.url("/lean/0"));
    const lean = await checkSite(targets.url("/lean/0"), env);
    if (lean.kind !== "result") throw new Error(lean.kind);
    expect(full.details?.requests).toHaveLength(3);
    expect(lean.result.details).toBeUndefined();
    expect({ ...lean.result, responseTime: 0 }).toEqual({ ...full, details: undefined, responseTime: 0 });
  });

  it("stops after five requests when a sixth would be needed: down, the fifth 3xx is the last response", async () => {
    for (let i = 0; i < 6; i++) targets.route(`/long/${i}`, { kind: "redirect", status: 302, location: `/long/${i + 1}` });
    targets.route("/long/6", { kind: "respond", status: 200 });
    const result = await check(targets.url("/long/0"));
    expect(result).toMatchObject({
      finalUrl: targets.url("/long/4"),
      status: "down",
      statusCode: 302,
      statusText: "Found",
      reason: "Too many redirects: still redirecting after 5 requests",
      failedStage: "http",
    });
    expect(result.redirectHops).toEqual(Array.from({ length: 5 }, (_, i) => ({ url: targets.url(`/long/${i}`), status: 302 })));
    expect(requestsTo("/long/5")).toBe(0);
    expect(Number.isInteger(result.responseTime)).toBe(true);
  });

  it("is up when the fifth request answers after four redirects", async () => {
    for (let i = 0; i < 4; i++) targets.route(`/edge/${i}`, { kind: "redirect", status: 307, location: `/edge/${i + 1}` });
    targets.route("/edge/4", { kind: "respond", status: 404 });
    const result = await check(targets.url("/edge/0"));
    expect(result).toMatchObject({ status: "up", statusCode: 404, finalUrl: targets.url("/edge/4") });
    expect(result.redirectHops).toHaveLength(4);
  });

  it.each([
    ["an absolute path", "/rel/target?x=1"],
    ["a sibling path", "target?x=1"],
    ["a parent path", "../rel/target?x=1"],
  ])("resolves a relative Location (%s) against the redirecting URL", async (_label, location) => {
    targets.route("/rel/from", { kind: "redirect", status: 302, location });
    targets.route("/rel/target", { kind: "respond", status: 200 });
    const result = await check(targets.url("/rel/from"));
    expect(result).toMatchObject({ status: "up", finalUrl: targets.url("/rel/target?x=1") });
  });

  it("follows an absolute Location to another origin on loopback", async () => {
    const other = await startHttpTargets({ routes: { "/abs/to": { kind: "respond", status: 200 } } });
    try {
      targets.route("/abs/from", { kind: "redirect", status: 301, location: other.url("/abs/to") });
      const result = await check(targets.url("/abs/from"));
      expect(result).toMatchObject({
        status: "up",
        finalUrl: other.url("/abs/to"),
        redirectHops: [{ url: targets.url("/abs/from"), status: 301 }],
      });
      expect(other.requests).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it("a redirect ending in a 5xx is down and keeps the redirects", async () => {
    targets.route("/to-error", { kind: "redirect", status: 302, location: "/error" });
    targets.route("/error", { kind: "respond", status: 500 });
    const result = await check(targets.url("/to-error"));
    expect(result).toMatchObject({
      status: "down",
      statusCode: 500,
      failedStage: "http",
      finalUrl: targets.url("/error"),
      redirectHops: [{ url: targets.url("/to-error"), status: 302 }],
    });
  });

  it("a 3xx that is not a redirect status (304) is the answer, not a redirect", async () => {
    targets.route("/not-modified", { kind: "respond", status: 304 });
    const result = await check(targets.url("/not-modified"));
    expect(result).toMatchObject({ status: "up", statusCode: 304, redirectHops: null });
  });
});

describe("site check: redirects that cannot be followed", () => {
  it("a redirect without Location is down at the http stage, that response being the last", async () => {
    targets.route("/no-location", { kind: "redirect", status: 302, location: null });
    const url = targets.url("/no-location");
    const result = await check(url);
    expect(result).toMatchObject({
      finalUrl: url,
      status: "down",
      statusCode: 302,
      statusText: "Found",
      reason: "Redirect without a Location header",
      failedStage: "http",
      redirectHops: [{ url, status: 302 }],
    });
  });

  it("a redirect to an unparsable Location is down", async () => {
    targets.route("/bad-location", { kind: "redirect", status: 301, location: "http://exa mple.test:99999/" });
    const result = await check(targets.url("/bad-location"));
    expect(result).toMatchObject({
      status: "down",
      statusCode: 301,
      reason: "Redirect to a Location that is not a valid URL",
      failedStage: "http",
    });
  });

  it("a redirect to a non-http(s) scheme is down and nothing is fetched", async () => {
    targets.route("/to-ftp", { kind: "redirect", status: 302, location: "ftp://127.0.0.1/file" });
    const url = targets.url("/to-ftp");
    const result = await reported(url);
    expect(result).toMatchObject({
      finalUrl: url,
      status: "down",
      statusCode: 302,
      reason: "Redirect to a non-HTTP URL cannot be followed",
      failedStage: "http",
    });
    expect(result.details?.requests).toHaveLength(1);
  });

  it.each([
    ["a private address", "http://10.0.0.1/admin", "Redirect to a non-public address was refused"],
    ["the metadata address", "http://169.254.169.254/latest/meta-data/", "Redirect to a non-public address was refused"],
    ["a unique-local IPv6 address", "http://[fd00::1]/", "Redirect to a non-public address was refused"],
    ["a Fetch bad port", "http://127.0.0.1:25/", "Redirect to a blocked port was refused"],
    ["a URL with credentials", "http://user:secret@127.0.0.1:8080/", "Redirect to a URL with credentials was refused"],
  ])("a redirect to %s is refused: down at http, finalUrl the refused URL, no status", async (_label, location, reason) => {
    const path = `/refused/${encodeURIComponent(location)}`;
    targets.route(path, { kind: "redirect", status: 302, location });
    const url = targets.url(path);
    const result = await reported(url);
    expect(result).toMatchObject({
      finalUrl: new URL(location).href,
      status: "down",
      statusCode: null,
      statusText: null,
      reason,
      failedStage: "http",
      redirectHops: [{ url, status: 302 }],
      proxyBlocked: false,
    });
    expect(Number.isInteger(result.responseTime)).toBe(true);
    expect(result.details?.requests.at(-1)?.report).toMatchObject({ kind: "stopped", refusal: { rule: expect.any(String) as string } });
  });
});

describe("site check: proxy detection", () => {
  it("a 403 carrying Cloudflare headers is up and proxyBlocked", async () => {
    targets.route("/cf-403", { kind: "respond", status: 403, headers: { server: "cloudflare", "cf-ray": "8a1b2c3d4e5f6789-AMS" } });
    const result = await check(targets.url("/cf-403"));
    expect(result).toMatchObject({ status: "up", statusCode: 403, proxyBlocked: true, proxyProvider: "Cloudflare" });
  });

  it("a 503 carrying CloudFront headers is down and proxyBlocked", async () => {
    targets.route("/cf-503", {
      kind: "respond",
      status: 503,
      headers: { "x-amz-cf-id": "abcDEF123==", via: "1.1 abc.cloudfront.net (CloudFront)" },
    });
    const result = await check(targets.url("/cf-503"));
    expect(result).toMatchObject({ status: "down", statusCode: 503, proxyBlocked: true, proxyProvider: "Amazon CloudFront" });
  });

  it("a 200 carrying the same headers is not proxyBlocked", async () => {
    targets.route("/cf-200", { kind: "respond", status: 200, headers: { server: "cloudflare", "cf-ray": "8a1b2c3d4e5f6789-AMS" } });
    const result = await check(targets.url("/cf-200"));
    expect(result).toMatchObject({ status: "up", proxyBlocked: false, proxyProvider: null });
  });

  it("a 403 from a plain origin is not proxyBlocked", async () => {
    targets.route("/plain-403", { kind: "respond", status: 403, headers: { server: "nginx" } });
    const result = await check(targets.url("/plain-403"));
    expect(result).toMatchObject({ status: "up", statusCode: 403, proxyBlocked: false });
  });
});
