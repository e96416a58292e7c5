import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SiteCheckResult } from "../../src/diagnostics/site-check-result.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type TestEnv, createTestEnv, checkedResult, checkSite } from "../fixtures/test-env.js";

// Every name is answered by the DNS fixture on loopback; nothing reaches a real resolver.
const SHORT_TIMEOUT_MS = 500;

let dns: DnsServer;
let targets: HttpTargets;
let env: TestEnv;

beforeAll(async () => {
  dns = await startDnsServer();
  targets = await startHttpTargets({ routes: { "/": { kind: "respond", status: 200 } } });
  env = createTestEnv({ dnsServers: [dns.server], siteTimeoutMs: SHORT_TIMEOUT_MS });
});

afterAll(async () => {
  await env.close();
  await targets.close();
  await dns.close();
});

function check(raw: string): Promise<SiteCheckResult> {
  return checkedResult(raw, env);
}

const NOTHING_RECEIVED = {
  finalUrl: null,
  status: "down",
  statusCode: null,
  statusText: null,
  responseTime: null,
  redirectHops: null,
  failedStage: "dns",
} as const;

describe("site check: name resolution", () => {
  it("checks a name that resolves to an allowed address", async () => {
    dns.answer("up.test", { a: ["127.0.0.1"] });
    const url = targets.url("/", { hostname: "up.test" });
    expect(await check(url)).toMatchObject({ status: "up", statusCode: 200, finalUrl: url });
  });

  it("a name that does not exist is down at the dns stage with nothing received", async () => {
    dns.answer("gone.test", "nxdomain");
    const result = await check(targets.url("/", { hostname: "gone.test" }));
    expect(result).toMatchObject({ ...NOTHING_RECEIVED, reason: "DNS lookup failed: no such host" });
  });

  it("a failing name server is down at the dns stage", async () => {
    dns.answer("broken.test", "servfail");
    const result = await check(targets.url("/", { hostname: "broken.test" }));
    expect(result).toMatchObject({ ...NOTHING_RECEIVED, reason: "DNS lookup failed: the name server reported a failure" });
  });

  it("a name with no address records is down at the dns stage", async () => {
    dns.answer("empty.test", { a: [], aaaa: [] });
    const result = await check(targets.url("/", { hostname: "empty.test" }));
    expect(result).toMatchObject({ ...NOTHING_RECEIVED, reason: "DNS lookup failed: the name has no address" });
  });

  it("a name server that never answers times out at the dns stage", async () => {
    dns.answer("silent.test", "never");
    const result = await check(targets.url("/", { hostname: "silent.test" }));
    expect(result).toMatchObject({ ...NOTHING_RECEIVED, reason: `Timed out after ${SHORT_TIMEOUT_MS} ms resolving the host name` });
  });

  it.each([
    ["a private address", { a: ["10.1.2.3"] }],
    ["the metadata address", { a: ["169.254.169.254"] }],
    ["a private address among allowed ones", { a: ["127.0.0.1", "192.168.1.10"] }],
    ["a unique-local IPv6 address", { aaaa: ["fd00::1"] }],
  ])("a name resolving to %s is refused as input: nothing is sent", async (_label, answer) => {
    const name = `private-${Math.random().toString(36).slice(2)}.test`;
    dns.answer(name, answer);
    const before = targets.requests.length;
    const outcome = await checkSite(targets.url("/", { hostname: name }), env);
    expect(outcome).toMatchObject({ kind: "refused", refusal: { rule: "non_public_address" } });
    expect(targets.requests.length).toBe(before);
  });
});

describe("site check: name resolution after a redirect", () => {
  it("a redirect to a name resolving to a private address is down at http, naming that URL", async () => {
    dns.answer("intranet.test", { a: ["192.168.0.1"] });
    const refused = "http://intranet.test/admin";
    targets.route("/to-intranet", { kind: "redirect", status: 302, location: refused });
    const result = await check(targets.url("/to-intranet"));
    expect(result).toMatchObject({
      finalUrl: refused,
      status: "down",
      statusCode: null,
      statusText: null,
      reason: "Redirect to a non-public address was refused",
      failedStage: "http",
      redirectHops: [{ url: targets.url("/to-intranet"), status: 302 }],
    });
  });

  it("a redirect to a name that does not exist is down at the dns stage, naming that URL", async () => {
    dns.answer("moved-away.test", "nxdomain");
    const missing = targets.url("/", { hostname: "moved-away.test" });
    targets.route("/to-missing", { kind: "redirect", status: 301, location: missing });
    const result = await check(targets.url("/to-missing"));
    expect(result).toMatchObject({
      finalUrl: missing,
      status: "down",
      statusCode: null,
      reason: "DNS lookup failed: no such host",
      failedStage: "dns",
      redirectHops: [{ url: targets.url("/to-missing"), status: 301 }],
    });
    expect(Number.isInteger(result.responseTime)).toBe(true);
  });
});
