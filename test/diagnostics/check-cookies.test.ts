import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cookieKey } from "../../src/diagnostics/check-cookies.js";
import { CHECK_COOKIES } from "../../src/shared/limits.js";
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
      "/scoped": {
        kind: "redirect",
        status: 302,
        location: "/landing",
        headers: { "set-cookie": ["narrow=1; Path=/elsewhere", "tls-only=1; Path=/; Secure", "wide=1; Path=/"] },
      },
      "/landing": { kind: "respond", status: 200 },
      // Issue 28: one cookie exactly at the 4 KiB bound, one a byte past it (ignored whole, so it replaces nothing).
      "/sizes": {
        kind: "redirect",
        status: 302,
        location: "/landing",
        headers: {
          "set-cookie": [
            `at=${"a".repeat(CHECK_COOKIES.maxCookieBytes - 2)}`,
            "past=kept",
            ` past = ${"p".repeat(CHECK_COOKIES.maxCookieBytes - 3)} ; Path=/`,
          ],
        },
      },
      // Three cookies of 3,000 bytes: the third would take the Cookie header past 8 KiB.
      "/wide": {
        kind: "redirect",
        status: 302,
        location: "/landing",
        headers: { "set-cookie": ["w1", "w2", "w3"].map((name) => `${name}=${"w".repeat(2_997)}; Path=/`) },
      },
      // One cookie, then (once it came back) one more than a domain keeps: the least recently used goes.
      "/crowd": (request) =>
        cookieOf(request) === ""
          ? { kind: "redirect", status: 302, location: "/crowd", headers: { "set-cookie": "first=1; Path=/" } }
          : {
              kind: "redirect",
              status: 302,
              location: "/landing",
              headers: { "set-cookie": Array.from({ length: CHECK_COOKIES.perDomain }, (_, index) => `c${index}=1; Path=/`) },
            },
      // As /crowd, one fewer: the first cookie still fits.
      "/room": (request) =>
        cookieOf(request) === ""
          ? { kind: "redirect", status: 302, location: "/room", headers: { "set-cookie": "first=1; Path=/" } }
          : {
              kind: "redirect",
              status: 302,
              location: "/landing",
              headers: { "set-cookie": Array.from({ length: CHECK_COOKIES.perDomain - 1 }, (_, index) => `c${index}=1; Path=/`) },
            },
      // More Set-Cookie lines than are read: the first ones go nowhere /landing sees, the ones past the bound would.
      "/many": {
        kind: "redirect",
        status: 302,
        location: "/landing",
        headers: {
          "set-cookie": [
            ...Array.from({ length: CHECK_COOKIES.maxSetCookieLines }, (_, index) => `early${index}=1; Path=/elsewhere`),
            ...Array.from({ length: 10 }, (_, index) => `late${index}=1; Path=/`),
          ],
        },
      },
    },
  });
  env = createTestEnv({ ca: pki.caPem, siteTimeoutMs: 2_000, dnsServers: [dns.server] });
});
afterAll(async () => {
  await targets.close();
  await env.close();
  await dns.close();
});

/** What a result shows outside the process. */
const shown = (result: object) => JSON.stringify(result);

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
    expect(await checkedResult(targets.url("/always"), env)).toMatchObject({
      status: "down",
      reason: "Too many redirects: still redirecting after 5 requests",
    });
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

describe("bounds on what a site can make the jar keep (issue 28)", () => {
  const sentTo = async (path: string) => {
    await checkedResult(targets.url(path, { hostname: "site.test" }), env);
    return cookieOf(requestsTo("/landing").at(-1) as ReceivedRequest);
  };

  it("keeps a cookie of 4 KiB (name and value) and ignores a larger one whole, as RFC 6265bis says", async () => {
    const pairs = (await sentTo("/sizes")).split("; ").sort();
    expect(pairs).toEqual([`at=${"a".repeat(CHECK_COOKIES.maxCookieBytes - 2)}`, "past=kept"]);
  });

  it("leaves out the cookies that would take the Cookie header past 8 KiB", async () => {
    const header = await sentTo("/wide");
    expect(header.length).toBeLessThanOrEqual(CHECK_COOKIES.maxHeaderBytes);
    expect(header.split("; ").map((pair) => pair.split("=", 1)[0])).toEqual(["w1", "w2"]);
  });

  it("evicts the least recently used cookie of a domain past 50", async () => {
    const crowd = (await sentTo("/crowd")).split("; ");
    expect(crowd).toHaveLength(CHECK_COOKIES.perDomain);
    expect(crowd).not.toContain("first=1");
    const room = (await sentTo("/room")).split("; ");
    expect(room).toHaveLength(CHECK_COOKIES.perDomain);
    expect(room).toContain("first=1");
  });

  it("reads at most 180 Set-Cookie lines of one response", async () => {
    expect(await sentTo("/many")).toBe("");
  });

  it("keys the loop detection by a digest of the Cookie header, never its text", () => {
    const key = cookieKey(`session=${SECRET}`);
    expect(key).not.toContain(SECRET);
    expect(key).toMatch(/^[\w-]{22}$/);
    expect(cookieKey(`session=${SECRET}`)).toBe(key);
    expect(cookieKey("session=other")).not.toBe(key);
    expect(cookieKey(undefined)).toBe("");
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
