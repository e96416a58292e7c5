import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticEnv } from "../../src/diagnostics/diagnostic-call.js";
import type { DiagnosticDetails } from "../../src/diagnostics/diagnostic-details.js";
import type { RedirectTraceResult } from "../../src/diagnostics/redirect-trace.js";
import type { Prober } from "../../src/probe/hop-types.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { loopbackProber, traceEnv, traceResult, traceRedirects } from "../fixtures/test-env.js";

let targets: HttpTargets;
let expired: HttpTargets;
let prober: Prober;
let env: DiagnosticEnv;

beforeAll(async () => {
  const pki = await getTestPki();
  targets = await startHttpTargets({ tls: pki.valid });
  expired = await startHttpTargets({ tls: pki.expired });
  prober = loopbackProber({ ca: pki.caPem });
  env = traceEnv(prober, {
    tracePorts: [targets.httpPort, targets.httpsPort ?? 0, expired.httpsPort ?? 0],
    traceHopTimeoutMs: 1_000,
    traceTotalTimeoutMs: 5_000,
  });
});

afterAll(async () => {
  await prober.close();
  await targets.close();
  await expired.close();
});

async function detailed(input: string): Promise<RedirectTraceResult & { details: DiagnosticDetails }> {
  const outcome = await traceRedirects(input, env, undefined, { details: true });
  if (outcome.kind !== "result") throw new Error(`expected a result, got ${outcome.kind}`);
  const { details } = outcome.result;
  if (details === undefined) throw new Error("no details");
  return { ...outcome.result, details };
}

const MS = expect.any(Number) as number;
const secure = (path: string) => targets.url(path, { secure: true });

describe("redirect-check without details", () => {
  it("has no details key and sends no extra request", async () => {
    targets.route("/plain", { kind: "respond", status: 200, headers: { refresh: "0; url=/x" } });
    const before = targets.requests.length;
    const result = await traceResult(targets.url("/plain"), env);
    expect("details" in result).toBe(false);
    expect(result.warnings).toEqual([]);
    expect(targets.requests.slice(before).map((request) => request.method)).toEqual(["HEAD"]);
  });
});

describe("redirect-check with details", () => {
  it("an HTTPS chain of three hops: one entry per hop, the certificate on each, one extra GET of the final page", async () => {
    targets.route("/one", { kind: "redirect", status: 301, location: "/two" });
    targets.route("/two", { kind: "redirect", status: 308, location: "/three" });
    targets.route("/three", { kind: "respond", status: 200, headers: { "content-type": "text/html" }, body: "<p>done</p>" });
    const before = targets.requests.length;
    const result = await detailed(secure("/one"));
    expect(result).toMatchObject({ chainStatus: "redirects_detected", redirects: 2, finalStatus: 200, warnings: [] });
    expect(result.details).toMatchObject({ code: null, proxy: null, clientRedirect: null });
    expect(result.details.requests.map((request) => [request.url, request.method, request.status])).toEqual([
      [secure("/one"), "HEAD", 301],
      [secure("/two"), "HEAD", 308],
      [secure("/three"), "HEAD", 200],
      [secure("/three"), "GET", 200],
    ]);
    for (const request of result.details.requests) {
      expect(request).toMatchObject({
        headFallback: false,
        remoteAddress: "127.0.0.1",
        ipFamily: 4,
        httpVersion: "1.1",
        tls: { verifyError: null, alpn: "http/1.1", certificate: { subject: "localhost", chainLength: 1 } },
        failure: null,
      });
    }
    // The redirects went to the same origin over a server that keeps connections alive: the hops after
    // the first ride its connection (no dial, no handshake), as in a browser, and so does the extra GET
    // of the final page (the final HEAD's connection was kept for it).
    const dialled = { dnsMs: null, connectMs: MS, tlsMs: MS, waitingMs: MS, receivingMs: MS, otherMs: MS, firstByteMs: MS, totalMs: MS };
    const reused = { dnsMs: null, connectMs: null, tlsMs: null, waitingMs: MS, receivingMs: MS, otherMs: MS, firstByteMs: MS, totalMs: MS };
    expect(result.details.requests.map((request) => [request.connectionReused, request.timings])).toEqual([
      [false, dialled],
      [true, reused],
      [true, reused],
      [true, reused],
    ]);
    expect(targets.requests.slice(before).map((request) => `${request.method} ${request.target}`)).toEqual([
      "HEAD /one",
      "HEAD /two",
      "HEAD /three",
      "GET /three",
    ]);
  });

  it("a HEAD refused and retried with GET: the HEAD's own entry, then the GET's, marked as a fallback; the total counts both", async () => {
    targets.route("/no-head", (request) =>
      request.method === "HEAD" ? { kind: "respond", status: 405 } : { kind: "respond", status: 204 },
    );
    const before = targets.requests.length;
    const { details, totalTimeMs, chain } = await detailed(targets.url("/no-head"));
    // Every request made is an entry: as many as the server saw, in the same order.
    expect(details.requests.map((request) => request.method)).toEqual(targets.requests.slice(before).map((request) => request.method));
    expect(details.requests).toMatchObject([
      { url: targets.url("/no-head"), method: "HEAD", headFallback: false, status: 405, failure: null },
      { url: targets.url("/no-head"), method: "GET", headFallback: true, status: 204 },
      // The final page is a 2xx: one more GET looks for a client-side redirect in its body.
      { url: targets.url("/no-head"), method: "GET", headFallback: false, status: 204 },
    ]);
    // The trace's total is the chain's requests (the HEAD included, not the extra read of the final page), rounded once.
    const [head, get] = details.requests;
    expect(totalTimeMs).toBe(
      Math.round((Math.round((head?.timings.totalMs ?? 0) * 10) + Math.round((get?.timings.totalMs ?? 0) * 10)) / 10),
    );
    expect(chain[0]?.responseTimeMs).toBe(Math.round(get?.timings.totalMs ?? 0));
  });

  it("a loop: redirect_loop", async () => {
    targets.route("/ping", { kind: "redirect", status: 302, location: "/pong" });
    targets.route("/pong", { kind: "redirect", status: 302, location: "/ping" });
    const { chainStatus, details } = await detailed(targets.url("/ping"));
    expect(chainStatus).toBe("redirect_loop");
    expect(details.code).toBe("redirect_loop");
    expect(details.requests).toHaveLength(2);
  });

  it("a redirect to an expired certificate: the failed request is the last entry, with the certificate and its code", async () => {
    targets.route("/to-expired", { kind: "redirect", status: 301, location: `https://127.0.0.1:${expired.httpsPort}/` });
    const { chainStatus, details } = await detailed(targets.url("/to-expired"));
    expect(chainStatus).toBe("request_failed");
    expect(details.code).toBe("tls_certificate_expired");
    expect(details.requests).toHaveLength(2);
    expect(details.requests[1]).toMatchObject({
      url: `https://127.0.0.1:${expired.httpsPort}/`,
      method: "HEAD",
      status: null,
      tls: { verifyError: "CERT_HAS_EXPIRED", certificate: { validTo: "2021-01-01T00:00:00.000Z" } },
      failure: { stage: "tls", code: "tls_certificate_expired", timedOut: false },
    });
    expect(expired.requests).toEqual([]);
  });

  it("a request timeout: the failed request's code", async () => {
    targets.route("/hang", { kind: "hang" });
    const { chainStatus, details } = await detailed(targets.url("/hang"));
    expect(chainStatus).toBe("timeout");
    expect(details.code).toBe("http_timeout");
    expect(details.requests).toMatchObject([{ method: "HEAD", failure: { stage: "http", code: "http_timeout", timedOut: true } }]);
  });

  it("a Refresh header on the final page: reported, warned about, not followed", async () => {
    targets.route("/start-refresh", { kind: "redirect", status: 301, location: "/refreshing" });
    targets.route("/refreshing", { kind: "respond", status: 200, headers: { refresh: "2; url=/after" } });
    const before = targets.requests.length;
    const result = await detailed(targets.url("/start-refresh"));
    expect(result.details.clientRedirect).toEqual({ kind: "refresh_header", url: targets.url("/after"), delaySeconds: 2 });
    expect(result.warnings.map((warning) => [warning.code, warning.hop])).toEqual([["client_side_redirect_not_followed", 2]]);
    // Seen on the HEAD already: no extra GET needed, and /after never requested.
    expect(targets.requests.slice(before).map((request) => `${request.method} ${request.target}`)).toEqual([
      "HEAD /start-refresh",
      "HEAD /refreshing",
    ]);
    expect(result.details.requests).toHaveLength(2);
  });

  it("a meta refresh in the final page: found by the extra GET, reported, warned about, not followed", async () => {
    targets.route("/meta", {
      kind: "respond",
      status: 200,
      headers: { "content-type": "text/html" },
      body: `<html><head><meta http-equiv="refresh" content="3;url='${targets.url("/after-meta")}'"></head></html>`,
    });
    const before = targets.requests.length;
    const result = await detailed(targets.url("/meta"));
    expect(result).toMatchObject({ chainStatus: "healthy", finalUrl: targets.url("/meta"), finalStatus: 200 });
    expect(result.details.clientRedirect).toEqual({ kind: "meta_refresh", url: targets.url("/after-meta"), delaySeconds: 3 });
    expect(result.warnings).toEqual([
      {
        code: "client_side_redirect_not_followed",
        hop: 1,
        message: `${targets.url("/meta")} redirects by itself (meta refresh, after 3 s) to ${targets.url("/after-meta")}; not followed`,
        severity: "warning",
      },
    ]);
    expect(targets.requests.slice(before).map((request) => `${request.method} ${request.target}`)).toEqual(["HEAD /meta", "GET /meta"]);
  });

  it("a Cloudflare-like challenge as the final answer: the proxy and its kind", async () => {
    targets.route("/challenged", {
      kind: "respond",
      status: 403,
      headers: { "cf-ray": "8a1b2c3d4e5f6789-AMS", "cf-mitigated": "challenge" },
    });
    const { details } = await detailed(targets.url("/challenged"));
    expect(details.proxy).toEqual({ provider: "cloudflare", kind: "challenge" });
    expect(details.code).toBeNull();
  });
});

describe("redirect-check with details and a report (as the CLI asks)", () => {
  it("marks each position and the final-page GET, and adds the report's facts only when asked", async () => {
    targets.route("/report/from", { kind: "redirect", status: 302, location: "/report/to" });
    targets.route("/report/to", { kind: "respond", status: 200, headers: { "content-type": "text/html" }, body: "<p>here</p>" });
    const plain = await detailed(targets.url("/report/from"));
    const reported = await traceResult(targets.url("/report/from"), env, { details: true, report: true });
    expect(plain.details.requests.map((request) => request.report)).toEqual([undefined, undefined, undefined]);
    expect(reported.details?.requests.map((request) => [request.url, request.method, request.report])).toEqual([
      [
        targets.url("/report/from"),
        "HEAD",
        { kind: "position", statusText: "Found", location: targets.url("/report/to"), cause: null, refusal: null },
      ],
      [targets.url("/report/to"), "HEAD", { kind: "position", statusText: "OK", location: null, cause: null, refusal: null }],
      [targets.url("/report/to"), "GET", { kind: "final-page", statusText: "OK", location: null, cause: null, refusal: null }],
    ]);
  });

  it("records the position a trace stopped at, refused by the target policy, last; the plain details do not", async () => {
    targets.route("/report/private", { kind: "redirect", status: 302, location: "http://10.0.0.1/" });
    const plain = await detailed(targets.url("/report/private"));
    const reported = await traceResult(targets.url("/report/private"), env, { details: true, report: true });
    expect(plain.details.requests.map((request) => request.url)).toEqual([targets.url("/report/private")]);
    expect(reported.details?.requests.map((request) => request.url)).toEqual([targets.url("/report/private"), "http://10.0.0.1/"]);
    expect(reported.details?.requests.at(-1)).toMatchObject({
      method: "HEAD",
      status: null,
      failure: null,
      tls: null,
      report: { kind: "stopped", refusal: { rule: "port" } },
    });
  });
});
