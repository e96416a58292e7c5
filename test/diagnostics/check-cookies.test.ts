import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { type HttpTargets, type ReceivedRequest, startHttpTargets } from "../fixtures/http-targets.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { checkedResult, createTestEnv, traceEnv, traceResult, type TestEnv } from "../fixtures/test-env.js";

/**
 * Cookies within one check (issue 18): a site that sets a cookie and
 * redirects to itself expecting it back is up, as in every browser and in
 * `curl -L -b ''`; the cookie goes only to later requests of the same check.
 */
const SECRET = "s3cr3t-session-value";
let targets: HttpTargets;
let env: TestEnv;
let dns: DnsServer;

const cookieOf = (request: ReceivedRequest) => String(request.headers.cookie ?? "");

beforeAll(async () => {
  const pki = await getTestPki();
  // A name, not 127.0.0.1: cookie rules treat a loopback address as a secure origin, as browsers do.
  dns = await startDnsServer();
  dns.answer("site.test", { a: ["127.0.0.1"] });
  targets = await startHttpTargets({
    tls: pki.valid,
    routes: {
      // The classic consent or session bounce: no cookie, set one and come back.
      "/gate": (request) =>
        cookieOf(request).includes(`session=${SECRET}`)
          ? { kind: "respond", status: 200 }
          : { kind: "redirect", status: 302, location: "/gate", headers: { "set-cookie": `session=${SECRET}; Path=/; HttpOnly` } },
      // Sets the same cookie and redirects to itself whatever it gets: a loop with or without cookies.
      "/always": { kind: "redirect", status: 302, location: "/always", headers: { "set-cookie": "seen=1; Path=/" } },
      // A cookie for another path, and a Secure one, then on to /landing.
      "/scoped": { kind: "redirect", status: 302, location: "/landing", headers: { "set-cookie": ["narrow=1; Path=/elsewhere", "tls-only=1; Path=/; Secure", "wide=1; Path=/"] } },
      "/landing": { kind: "respond", status: 200 },
    },
  });
  env = createTestEnv({ ca: pki.caPem, siteTimeoutMs: 2_000, dnsServers: [dns.server] });
});
afterAll(async () => {
  await targets.close();
  await env.close();
  await dns.close();
});

/** What a result shows outside the process (the probe's own per-request record, `attempts`, stays inside). */
const shown = (result: object) => JSON.stringify({ ...result, attempts: undefined });

const requestsTo = (path: string) => targets.requests.filter((request) => request.target === path);

describe("is-site-down", () => {
  it("a site that sets a cookie and redirects to itself expecting it back is up (it was 'Too many redirects')", async () => {
    const before = requestsTo("/gate").length;
    const result = await checkedResult(targets.url("/gate"), env);
    expect(result).toMatchObject({ status: "up", statusCode: 200, finalUrl: targets.url("/gate"), redirectHops: [{ status: 302 }] });
    const sent = requestsTo("/gate").slice(before).map(cookieOf);
    // Only the later request carries it; the first request of a check never carries a cookie.
    expect(sent).toEqual(["", `session=${SECRET}`]);
    expect(shown(result)).not.toContain(SECRET);
  });

  it("keeps nothing beyond the check: the next check starts without cookies", async () => {
    await checkedResult(targets.url("/gate"), env);
    const before = requestsTo("/gate").length;
    await checkedResult(targets.url("/gate"), env);
    expect(cookieOf(requestsTo("/gate")[before] as ReceivedRequest)).toBe("");
  });

  it("a site that redirects to itself whatever cookie it gets is still down", async () => {
    expect(await checkedResult(targets.url("/always"), env)).toMatchObject({ status: "down", reason: "Too many redirects: still redirecting after 5 requests" });
  });

  it("sends a cookie only where RFC 6265 lets it go: path, and Secure only over HTTPS", async () => {
    await checkedResult(targets.url("/scoped", { hostname: "site.test" }), env);
    expect(cookieOf(requestsTo("/landing").at(-1) as ReceivedRequest)).toBe("wide=1");
    await checkedResult(targets.url("/scoped", { secure: true }), env);
    const overTls = requestsTo("/landing").at(-1) as ReceivedRequest;
    expect(overTls.secure).toBe(true);
    expect(cookieOf(overTls).split("; ").sort()).toEqual(["tls-only=1", "wide=1"]);
  });
});

describe("redirect-check", () => {
  const trace = (path: string) => traceResult(targets.url(path), traceEnv(env.prober, { tracePorts: [targets.httpPort] }));

  it("the same site is Redirects detected, not a redirect loop", async () => {
    const result = await trace("/gate");
    expect(result).toMatchObject({ chainStatus: "redirects_detected", finalStatus: 200, redirects: 1 });
    expect(result.chain.map((hop) => hop.status)).toEqual([302, 200]);
    expect(shown(result)).not.toContain(SECRET);
  });

  it("a redirect back with the same cookies is still a loop", async () => {
    const result = await trace("/always");
    expect(result.chainStatus).toBe("redirect_loop");
    expect(result.warnings.at(-1)?.code).toBe("redirect_loop");
  });
});
