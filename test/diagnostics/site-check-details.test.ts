import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticDetails, RequestRecord } from "../../src/diagnostics/diagnostic-details.js";
import type { SiteCheckResult } from "../../src/diagnostics/site-check-result.js";
import type { HopTimings } from "../../src/probe/hop-types.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { type HttpTargets, closedLoopbackPort, startHttpTargets } from "../fixtures/http-targets.js";
import { type RawTarget, startRawTarget } from "../fixtures/raw-targets.js";
import { getTestPki, type TestPki } from "../fixtures/test-ca.js";
import { type TestEnv, checkedResult, createTestEnv, checkSite } from "../fixtures/test-env.js";

const SHORT_TIMEOUT_MS = 400;

let pki: TestPki;
let dns: DnsServer;
let targets: HttpTargets;
let expired: HttpTargets;
let env: TestEnv;

beforeAll(async () => {
  pki = await getTestPki();
  dns = await startDnsServer();
  targets = await startHttpTargets({
    tls: pki.valid,
    routes: {
      "/ok": { kind: "respond", status: 200, body: "fine" },
      "/a": { kind: "redirect", status: 301, location: "/b" },
      "/b": { kind: "redirect", status: 302, location: "/ok" },
      "/hang": { kind: "hang" },
      "/broken": { kind: "respond", status: 503 },
      "/refresh": {
        kind: "respond",
        status: 200,
        headers: { refresh: "5; url=/elsewhere", "content-type": "text/html" },
        body: "<p>moving</p>",
      },
      "/meta": {
        kind: "respond",
        status: 200,
        headers: { "content-type": "text/html; charset=utf-8" },
        body: '<!doctype html><html><head><meta http-equiv="refresh" content="0; url=https://next.test/landing"></head><body>x</body></html>',
      },
      "/cf-challenge": {
        kind: "respond",
        status: 403,
        headers: { "cf-ray": "8a1b2c3d4e5f6789-AMS", "cf-mitigated": "challenge", server: "cloudflare" },
      },
      "/cf-522": {
        kind: "respond",
        status: 522,
        statusText: "Origin Connection Time-out",
        headers: { "cf-ray": "8a1b2c3d4e5f6789-AMS", server: "cloudflare" },
      },
      "/sucuri": { kind: "respond", status: 403, headers: { "x-sucuri-id": "11005", "x-sucuri-block": "BL2" } },
    },
  });
  expired = await startHttpTargets({ tls: pki.expired, routes: { "/": { kind: "respond", status: 200 } } });
  env = createTestEnv({ ca: pki.caPem, dnsServers: [dns.server], siteTimeoutMs: SHORT_TIMEOUT_MS });
});

afterAll(async () => {
  await env.close();
  await targets.close();
  await expired.close();
  await dns.close();
});

async function detailed(url: string): Promise<SiteCheckResult & { details: DiagnosticDetails }> {
  const outcome = await checkSite(url, env, undefined, { details: true });
  if (outcome.kind !== "result") throw new Error(`expected a result, got ${outcome.kind}`);
  const { details } = outcome.result;
  if (details === undefined) throw new Error("no details");
  return { ...outcome.result, details };
}

function only(requests: readonly RequestRecord[]): RequestRecord {
  expect(requests).toHaveLength(1);
  return requests[0] as RequestRecord;
}

const MS = expect.any(Number) as number;

/** The sum of a request's phases and `other`, in tenths of a millisecond. */
function tenthsOfPhases(timings: HopTimings): number {
  return [timings.dnsMs, timings.connectMs, timings.tlsMs, timings.waitingMs, timings.receivingMs, timings.otherMs].reduce<number>(
    (sum, ms) => sum + Math.round((ms ?? 0) * 10),
    0,
  );
}

describe("is-site-down without details", () => {
  it("has no details key at all", async () => {
    const result = await checkedResult(targets.url("/ok"), env);
    expect("details" in result).toBe(false);
  });
});

describe("is-site-down with details: every field of a request", () => {
  it("an HTTP target by IP literal: no dns, no tls", async () => {
    const result = await detailed(targets.url("/ok"));
    expect(result.status).toBe("up");
    expect(result.details).toEqual({
      code: null,
      proxy: null,
      clientRedirect: null,
      // An IP literal has one family and one address: nothing to compare; http has no TLS versions.
      families: null,
      addresses: null,
      tlsVersions: null,
      warnings: [],
      // A 200 page that tells search engines nothing in particular (issue 39).
      search: { noindex: null, canonical: null, redirectToHome: false, soft404: null, bodyRead: true },
      requests: [
        {
          url: targets.url("/ok"),
          method: "GET",
          headFallback: false,
          remoteAddress: "127.0.0.1",
          ipFamily: 4,
          httpVersion: "1.1",
          status: 200,
          timings: { dnsMs: null, connectMs: MS, tlsMs: null, waitingMs: MS, receivingMs: MS, otherMs: MS, firstByteMs: MS, totalMs: MS },
          connectionReused: false,
          tls: null,
          failure: null,
          // The head's fields, as sent: details asked for them.
          responseHead: {
            fields: expect.arrayContaining([
              ["Date", expect.any(String) as string],
              ["Transfer-Encoding", "chunked"],
            ]) as unknown,
            truncated: false,
          },
          // An http:// answer: no HSTS is taken from it, so none is read.
          transportSecurity: null,
          // An IP-address host: nothing resolved.
          resolution: null,
        },
      ],
      resolutions: [],
    });
    const timings = only(result.details.requests).timings;
    // 0.1 ms precision.
    for (const value of [timings.connectMs, timings.waitingMs, timings.receivingMs, timings.otherMs, timings.firstByteMs, timings.totalMs])
      expect(Math.round((value ?? 0) * 10) / 10).toBe(value);
    // The phases and `other` add up to the total exactly, in tenths.
    expect(tenthsOfPhases(timings)).toBe(Math.round(timings.totalMs * 10));
  });

  it("every request made is an entry, and the response time is the sum of their totals rounded half up once", async () => {
    const before = targets.requests.length;
    const result = await detailed(targets.url("/a"));
    expect(result.details.requests.map((request) => `${request.method} ${new URL(request.url).pathname}`)).toEqual(
      targets.requests.slice(before).map((request) => `${request.method} ${request.target}`),
    );
    const tenths = result.details.requests.reduce((sum, request) => sum + Math.round(request.timings.totalMs * 10), 0);
    expect(result.responseTime).toBe(Math.round(tenths / 10));
  });

  it("a DNS name over HTTPS through two redirects: one entry per request, dns and tls timed, the certificate read", async () => {
    // The test certificate names localhost; the DNS fixture answers it, no system resolver is asked.
    dns.answer("localhost", { a: ["127.0.0.1"] });
    const result = await detailed(targets.url("/a", { secure: true, hostname: "localhost" }));
    expect(result.status).toBe("up");
    expect(result.details.requests.map((request) => [request.url, request.status])).toEqual([
      [targets.url("/a", { secure: true, hostname: "localhost" }), 301],
      [targets.url("/b", { secure: true, hostname: "localhost" }), 302],
      [targets.url("/ok", { secure: true, hostname: "localhost" }), 200],
    ]);
    // Every request resolves and judges the name again; the later ones ride the first's kept connection
    // (same origin, a keep-alive server), so only the first has a handshake, while all show its session.
    expect(result.details.requests.map((request) => [request.connectionReused, request.timings.tlsMs === null])).toEqual([
      [false, false],
      [true, true],
      [true, true],
    ]);
    for (const request of result.details.requests) {
      expect(request.timings.dnsMs).toEqual(MS);
      expect(request.tls).toMatchObject({
        protocol: expect.stringMatching(/^TLSv1\.[23]$/) as string,
        cipher: expect.any(String) as string,
        alpn: "http/1.1",
        verifyError: null,
        certificate: {
          subject: "localhost",
          issuer: "sitediag test CA, sitediag tests",
          subjectAltNames: ["DNS:localhost", "IP Address:127.0.0.1", "IP Address:0:0:0:0:0:0:0:1"],
          chainLength: 1,
        },
      });
      // The test leaf is valid for a year from yesterday.
      expect(request.tls?.certificate?.daysRemaining).toBeGreaterThanOrEqual(364);
      expect(request.tls?.certificate?.daysRemaining).toBeLessThanOrEqual(365);
    }
  });

  it("a server error: http_server_error", async () => {
    expect((await detailed(targets.url("/broken"))).details).toMatchObject({
      code: "http_server_error",
      requests: [{ status: 503, failure: null }],
    });
  });

  it("too many redirects: too_many_redirects, five requests", async () => {
    targets.route("/loop", { kind: "redirect", status: 302, location: "/loop" });
    const { details } = await detailed(targets.url("/loop"));
    expect(details.code).toBe("too_many_redirects");
    expect(details.requests).toHaveLength(5);
  });
});

describe("is-site-down with details: each failure stage with its code", () => {
  it("dns: no such host", async () => {
    dns.answer("gone.test", "nxdomain");
    const { details } = await detailed(targets.url("/ok", { hostname: "gone.test" }));
    expect(details.code).toBe("dns_no_such_host");
    expect(only(details.requests)).toMatchObject({
      remoteAddress: null,
      ipFamily: null,
      status: null,
      httpVersion: null,
      tls: null,
      // The phase it failed in runs to the failure: all of its time is DNS.
      timings: { dnsMs: MS, connectMs: null, tlsMs: null, waitingMs: null, receivingMs: null, firstByteMs: null, totalMs: MS },
      failure: { stage: "dns", code: "dns_no_such_host", reason: "DNS lookup failed: no such host", timedOut: false, elapsedMs: MS },
    });
  });

  it("dns: a resolver that never answers times out", async () => {
    dns.answer("silent.test", "never");
    const { details } = await detailed(targets.url("/ok", { hostname: "silent.test" }));
    expect(details.code).toBe("dns_timeout");
    expect(only(details.requests).failure).toMatchObject({
      stage: "dns",
      code: "dns_timeout",
      timedOut: true,
      reason: `Timed out after ${SHORT_TIMEOUT_MS} ms resolving the host name`,
    });
  });

  it("connect: refused", async () => {
    const port = await closedLoopbackPort();
    const { details } = await detailed(`http://127.0.0.1:${port}/`);
    expect(details.code).toBe("connect_refused");
    expect(only(details.requests)).toMatchObject({
      remoteAddress: "127.0.0.1",
      ipFamily: 4,
      failure: { stage: "connect", code: "connect_refused" },
    });
  });

  it("tls: an expired certificate, shown with its verify code", async () => {
    const { details } = await detailed(`https://127.0.0.1:${expired.httpsPort}/`);
    expect(details.code).toBe("tls_certificate_expired");
    const request = only(details.requests);
    expect(request.failure).toMatchObject({ stage: "tls", code: "tls_certificate_expired", reason: "TLS certificate has expired" });
    expect(request.tls).toMatchObject({
      verifyError: "CERT_HAS_EXPIRED",
      certificate: { subject: "localhost", validTo: "2021-01-01T00:00:00.000Z" },
    });
    expect(request.tls?.certificate?.daysRemaining).toBeLessThan(-365);
    expect(request.timings.connectMs).toEqual(MS);
    expect(request.timings.tlsMs).toEqual(MS);
    expect(expired.requests).toEqual([]);
  });

  it("http: a server that never answers times out; a garbage answer is invalid", async () => {
    const hang = await detailed(targets.url("/hang"));
    expect(hang.details.code).toBe("http_timeout");
    expect(only(hang.details.requests)).toMatchObject({
      timings: { connectMs: MS, firstByteMs: null, receivingMs: null },
      failure: { stage: "http", code: "http_timeout", timedOut: true },
    });
    // Accepted, never answered: the wait is a phase of its own, running to the timeout, and the phases add up.
    const hung = only(hang.details.requests).timings;
    expect(hung.waitingMs).toBeGreaterThanOrEqual(SHORT_TIMEOUT_MS * 0.9);
    expect(tenthsOfPhases(hung)).toBe(Math.round(hung.totalMs * 10));

    const garbage: RawTarget = await startRawTarget({ kind: "garbage" });
    try {
      const { details } = await detailed(garbage.url);
      expect(details.code).toBe("http_invalid_response");
      expect(only(details.requests).failure).toMatchObject({ stage: "http", code: "http_invalid_response", timedOut: false });
    } finally {
      await garbage.close();
    }
  });

  it("a redirect to a non-public address: refused, no request entry for it", async () => {
    targets.route("/to-private", { kind: "redirect", status: 302, location: "http://10.0.0.1/" });
    const result = await detailed(targets.url("/to-private"));
    expect(result).toMatchObject({ status: "down", reason: "Redirect to a non-public address was refused" });
    expect(result.details.code).toBe("redirect_refused_non_public");
    expect(result.details.requests.map((request) => request.url)).toEqual([targets.url("/to-private")]);
  });
});

describe("is-site-down with details: client-side redirects, reported and not followed", () => {
  it("a Refresh header", async () => {
    const before = targets.requests.length;
    const result = await detailed(targets.url("/refresh"));
    expect(result).toMatchObject({ status: "up", finalUrl: targets.url("/refresh") });
    expect(result.details.clientRedirect).toEqual({ kind: "refresh_header", url: targets.url("/elsewhere"), delaySeconds: 5 });
    expect(targets.requests.slice(before).map((request) => request.target)).toEqual(["/refresh"]);
  });

  it("a meta refresh in the HTML body", async () => {
    const before = targets.requests.length;
    const result = await detailed(targets.url("/meta"));
    expect(result).toMatchObject({ status: "up", finalUrl: targets.url("/meta"), redirectHops: null });
    expect(result.details.clientRedirect).toEqual({ kind: "meta_refresh", url: "https://next.test/landing", delaySeconds: 0 });
    expect(targets.requests.slice(before).map((request) => request.target)).toEqual(["/meta"]);
  });

  it("responseTime ends at the response head: reading the body for details adds nothing to it", async () => {
    const late = await startRawTarget({ kind: "late-body", delayMs: SHORT_TIMEOUT_MS / 2 });
    try {
      const result = await detailed(late.url);
      // The body was waited for: the meta refresh in it was read.
      expect(result.details.clientRedirect).toEqual({ kind: "meta_refresh", url: `${late.url}later`, delaySeconds: 0 });
      // The same clock reading as the request's own time to its head, give or take rounding: nowhere near the body's 200 ms.
      const head = only(result.details.requests).timings.totalMs;
      expect(Math.abs((result.responseTime ?? Number.POSITIVE_INFINITY) - head)).toBeLessThan(SHORT_TIMEOUT_MS / 4);
    } finally {
      await late.close();
    }
  });

  it("an endless body is read only up to its prefix, within the request's time", async () => {
    const endless = await startRawTarget({ kind: "endless-body" });
    try {
      const result = await detailed(endless.url);
      expect(result).toMatchObject({ status: "up", statusCode: 200 });
      expect(result.details.clientRedirect).toBeNull();
    } finally {
      await endless.close();
    }
  });
});

describe("is-site-down with details: proxy signatures", () => {
  it.each([
    ["/cf-challenge", { provider: "cloudflare", kind: "challenge" }, true],
    ["/cf-522", { provider: "cloudflare", kind: "origin_error" }, true],
    ["/sucuri", { provider: "sucuri", kind: "block" }, true],
  ] as const)("%s", async (path, proxy, proxyBlocked) => {
    const result = await detailed(targets.url(path));
    expect(result.proxyBlocked).toBe(proxyBlocked);
    expect(result.details.proxy).toEqual(proxy);
  });
});
