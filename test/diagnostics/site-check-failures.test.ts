import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SiteCheckResult } from "../../src/diagnostics/site-check-result.js";
import { type HttpTargets, closedLoopbackPort, startHttpTargets } from "../fixtures/http-targets.js";
import { type TestEnv, createTestEnv, checkedResult, checkSite, REPORTED } from "../fixtures/test-env.js";

const SHORT_TIMEOUT_MS = 400;

let targets: HttpTargets;
let env: TestEnv;

beforeAll(async () => {
  targets = await startHttpTargets();
  env = createTestEnv({ siteTimeoutMs: SHORT_TIMEOUT_MS });
});

afterAll(async () => {
  await env.close();
  await targets.close();
});

function check(raw: string): Promise<SiteCheckResult> {
  return checkedResult(raw, env);
}

/** §4.1 behaviour 3: no HTTP response at all leaves every response field null. */
const NOTHING_RECEIVED = {
  finalUrl: null,
  status: "down",
  statusCode: null,
  statusText: null,
  responseTime: null,
  redirectHops: null,
  proxyBlocked: false,
} as const;

describe("site check: failures on the first request", () => {
  it("a refused connection is down at the connect stage with nothing received", async () => {
    const port = await closedLoopbackPort();
    const url = `http://127.0.0.1:${port}/`;
    const result = await checkedResult(url, env, REPORTED);
    expect(result).toEqual({
      ...NOTHING_RECEIVED,
      requestedUrl: url,
      reason: "Connection refused",
      failedStage: "connect",
      proxyProvider: null,
      details: expect.objectContaining({ requests: [expect.objectContaining({ url, failure: expect.any(Object) as object })] }) as object,
    });
  });

  it("a server that never answers times out at the http stage", async () => {
    targets.route("/hang", { kind: "hang" });
    const result = await check(targets.url("/hang"));
    expect(result).toMatchObject({
      ...NOTHING_RECEIVED,
      reason: `Timed out after ${SHORT_TIMEOUT_MS} ms waiting for a response`,
      failedStage: "http",
    });
  });

  it("a response slower than the timeout is a timeout, one faster is not", async () => {
    targets.route("/slow", { kind: "respond", status: 200, delayMs: SHORT_TIMEOUT_MS * 3 });
    targets.route("/quick", { kind: "respond", status: 200, delayMs: 20 });
    expect(await check(targets.url("/slow"))).toMatchObject({ status: "down", failedStage: "http" });
    expect(await check(targets.url("/quick"))).toMatchObject({ status: "up", statusCode: 200 });
  });

  it("a connection closed without a response is down at the http stage", async () => {
    targets.route("/reset", { kind: "reset" });
    const result = await check(targets.url("/reset"));
    expect(result).toMatchObject({
      ...NOTHING_RECEIVED,
      reason: "The server closed the connection without a response",
      failedStage: "http",
    });
  });

  it("a response that is not HTTP is down at the http stage", async () => {
    targets.route("/garbage", { kind: "raw", data: "SSH-2.0-OpenSSH_9.6\r\n\r\n" });
    const result = await check(targets.url("/garbage"));
    expect(result).toMatchObject({
      ...NOTHING_RECEIVED,
      reason: "The server sent an invalid HTTP response",
      failedStage: "http",
    });
  });
});

describe("site check: failures after redirects", () => {
  it("a refused connection after a redirect names the URL that failed and keeps the time", async () => {
    const port = await closedLoopbackPort();
    const dead = `http://127.0.0.1:${port}/gone`;
    targets.route("/to-dead", { kind: "redirect", status: 301, location: dead });
    const result = await check(targets.url("/to-dead"));
    expect(result).toMatchObject({
      finalUrl: dead,
      status: "down",
      statusCode: null,
      statusText: null,
      reason: "Connection refused",
      failedStage: "connect",
      redirectHops: [{ url: targets.url("/to-dead"), status: 301 }],
    });
    expect(Number.isInteger(result.responseTime)).toBe(true);
  });

  it("a timeout after two redirects names the URL that hung", async () => {
    targets.route("/a", { kind: "redirect", status: 302, location: "/b" });
    targets.route("/b", { kind: "redirect", status: 307, location: "/hang-late" });
    targets.route("/hang-late", { kind: "hang" });
    const result = await check(targets.url("/a"));
    expect(result).toMatchObject({
      finalUrl: targets.url("/hang-late"),
      status: "down",
      statusCode: null,
      statusText: null,
      reason: `Timed out after ${SHORT_TIMEOUT_MS} ms waiting for a response`,
      failedStage: "http",
      redirectHops: [
        { url: targets.url("/a"), status: 302 },
        { url: targets.url("/b"), status: 307 },
      ],
    });
    // The elapsed time covers the wait for the hanging request.
    expect(result.responseTime).toBeGreaterThanOrEqual(SHORT_TIMEOUT_MS - 50);
  });
});

describe("site check: input refused before anything is sent", () => {
  it.each([
    ["an empty url", "", "invalid_url"],
    ["blank space", "   ", "invalid_url"],
    ["a bare domain", "example.com", "invalid_url"],
    ["a bare domain with a port", "example.com:8080/x", "invalid_url"],
    ["another scheme", "ftp://127.0.0.1/file", "scheme"],
    ["a javascript: URL", "javascript:alert(1)", "scheme"],
    ["an unparsable URL", "http://[::1/", "invalid_url"],
    ["a URL with credentials", "http://user:pass@127.0.0.1:8080/", "credentials"],
    ["a private address", "http://10.0.0.1/", "non_public_address"],
    ["the metadata address", "http://169.254.169.254/latest/meta-data/", "non_public_address"],
    ["a unique-local IPv6 address", "http://[fd00::1]:8080/", "non_public_address"],
    ["a decimal-encoded private address", "http://167772161/", "non_public_address"],
    ["SMTP port 25", "http://127.0.0.1:25/", "bad_port"],
    ["SSH port 22", "http://127.0.0.1:22/", "bad_port"],
    ["X11 port 6000", "http://127.0.0.1:6000/", "bad_port"],
    ["IRC port 6667", "http://127.0.0.1:6667/", "bad_port"],
    ["a URL over 2048 characters", `http://127.0.0.1:8080/${"a".repeat(2_048)}`, "url_too_long"],
  ])("refuses %s", async (_label, raw, rule) => {
    const outcome = await checkSite(raw, env);
    expect(outcome.kind).toBe("refused");
    if (outcome.kind === "refused") {
      expect(outcome.refusal.rule).toBe(rule);
      expect(outcome.refusal.reason.length).toBeGreaterThan(0);
    }
  });

  it("accepts a URL of exactly 2048 characters", async () => {
    const prefix = targets.url("/long-ok/");
    targets.route(`/long-ok/${"a".repeat(2_048 - prefix.length)}`, { kind: "respond", status: 200 });
    const raw = prefix + "a".repeat(2_048 - prefix.length);
    expect(raw).toHaveLength(2_048);
    expect(await check(raw)).toMatchObject({ status: "up", statusCode: 200 });
  });
});
