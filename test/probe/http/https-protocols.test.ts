import { once } from "node:events";
import { createSecureServer, type Http2SecureServer, type OutgoingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";
import { createServer as createTlsServer, type Server as TlsServer } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HopOutcome, Prober } from "../../../src/probe/hop-types.js";
import { getTestPki, type KeyPair, type TestPki } from "../../fixtures/test-ca.js";
import {
  checkedResult,
  createTestEnv,
  loopbackProber,
  traceEnv,
  traceResult,
  type TestEnv,
  traceRedirects,
} from "../../fixtures/test-env.js";

/**
 * HTTPS as browsers speak it (issue 18): ALPN offers h2 and http/1.1, the
 * server's choice is spoken over the same pinned, verified socket, and a leaf
 * sent without its intermediate is told apart from an untrusted issuer.
 */
let pki: TestPki;
let env: TestEnv;
let prober: Prober;
const closers: (() => Promise<void>)[] = [];

/** An HTTP/2 server offering only h2 in ALPN, as some CDNs' edges and Caddy configurations do. */
async function startH2Only(): Promise<{ url: (path: string) => string; methods: string[]; sessions: () => number }> {
  const methods: string[] = [];
  // Sessions that carried a request: details' TLS-version handshakes open sessions that never carry one.
  const carrying = new Set<unknown>();
  const server: Http2SecureServer = createSecureServer({ key: pki.valid.key, cert: pki.valid.cert, allowHTTP1: false });
  server.on("stream", (stream: ServerHttp2Stream, headers) => {
    carrying.add(stream.session);
    // The probe cancels a stream once it has what it needs; that is no error of the server's.
    stream.on("error", () => undefined);
    const path = String(headers[":path"]);
    methods.push(`${String(headers[":method"])} ${path} cookie=${String(headers.cookie ?? "")}`);
    if (path === "/old") return stream.respond({ ":status": 301, location: "/new" }, { endStream: true });
    if (path === "/moved-with-body") {
      stream.respond({ ":status": 302, location: "/new", "content-type": "text/html" });
      return stream.end("<a href=/new>moved</a>") as unknown as void;
    }
    if (path === "/old-then-goaway") {
      stream.respond({ ":status": 301, location: "/new" }, { endStream: true });
      // The server is shutting this connection down: GOAWAY, no new streams on it.
      return stream.session?.close();
    }
    if (path === "/to-timeout") return stream.respond({ ":status": 301, location: "/timeout" }, { endStream: true });
    if (path === "/timeout") return stream.respond({ ":status": 408 }, { endStream: true });
    if (path === "/hints") {
      stream.additionalHeaders({ ":status": 103, link: "</a.css>; rel=preload" });
      return stream.respond({ ":status": 200 }, { endStream: true }) as unknown as void;
    }
    if (path === "/broken") return stream.respond({ ":status": 502 }, { endStream: true });
    if (path === "/page") {
      stream.respond({ ":status": 200, "content-type": "text/html" });
      return stream.end("<html><meta http-equiv=refresh content=0;url=/next></html>") as unknown as void;
    }
    if (path === "/reset") return stream.close(7);
    if (path === "/hang") return;
    if (path === "/gate") {
      if (String(headers.cookie ?? "").includes("g=1")) return stream.respond({ ":status": 200 }, { endStream: true });
      return stream.respond({ ":status": 302, location: "/gate", "set-cookie": "g=1; Path=/; Secure; HttpOnly" }, { endStream: true });
    }
    if (path === "/sts-twice") {
      // Two Strict-Transport-Security fields: the first, short one counts (RFC 6797 §8.1), kept apart over HTTP/2 too.
      // Node's typings allow one value for this name; the wire (and Node at run time) allows two.
      const fields = Object.fromEntries([
        [":status", 200],
        ["strict-transport-security", ["max-age=60", "max-age=31536000"]],
        ["alt-svc", 'h3=":443"'],
      ]) as OutgoingHttpHeaders;
      return stream.respond(fields, { endStream: true });
    }
    if (path === "/no-head") return stream.respond({ ":status": headers[":method"] === "HEAD" ? 405 : 200 }, { endStream: true });
    const head = headers[":method"] === "HEAD";
    stream.respond({ ":status": 200, "set-cookie": ["a=1; Path=/", "b=2; Path=/"] }, { endStream: head });
    if (!head) stream.end("ok");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: (path) => `https://127.0.0.1:${port}${path}`, methods, sessions: () => carrying.size };
}

/** A TLS server answering with fixed HTTP/1.1 bytes, with the given ALPN list (none when undefined). */
async function startTls(pair: KeyPair, alpn: string[] | undefined): Promise<string> {
  const server: TlsServer = createTlsServer(
    { key: pair.key, cert: pair.cert, ...(alpn === undefined ? {} : { ALPNProtocols: alpn }) },
    (socket) => {
      socket.on("error", () => undefined);
      socket.once("data", () => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"));
    },
  );
  server.on("tlsClientError", () => undefined);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

let h2: Awaited<ReturnType<typeof startH2Only>>;

beforeAll(async () => {
  pki = await getTestPki();
  env = createTestEnv({ ca: pki.caPem, siteTimeoutMs: 2_000 });
  prober = loopbackProber({ ca: pki.caPem });
  h2 = await startH2Only();
});
afterAll(async () => {
  await env.close();
  await prober.close();
  for (const close of closers) await close();
});

const hop = (url: string, method: "GET" | "HEAD" = "GET", bodyPrefixBytes = 0): Promise<HopOutcome> =>
  prober.hop({ url: new URL(url), method, timeoutMs: 2_000, ports: { kind: "fetch-safe" }, bodyPrefixBytes });

async function response(url: string, method: "GET" | "HEAD" = "GET", bodyPrefixBytes = 0) {
  const outcome = await hop(url, method, bodyPrefixBytes);
  if (outcome.kind !== "response") throw new Error(JSON.stringify(outcome));
  return outcome.response;
}

async function failure(url: string) {
  const outcome = await hop(url);
  if (outcome.kind !== "failure") throw new Error(JSON.stringify(outcome));
  return outcome.failure;
}

describe("a server that offers only h2 in ALPN", () => {
  it("keeps the response's header fields in order, repeats kept and cookie values redacted, only when asked", async () => {
    const asked = await prober.hop({
      url: new URL(h2.url("/")),
      method: "HEAD",
      timeoutMs: 2_000,
      ports: { kind: "fetch-safe" },
      captureHead: true,
    });
    if (asked.kind !== "response") throw new Error(asked.kind);
    expect(asked.response.headFields).toEqual({
      fields: [
        ["set-cookie", "a=[redacted]"],
        ["set-cookie", "b=[redacted]"],
        ["date", expect.any(String) as string],
      ],
      truncated: false,
    });
    expect((await response(h2.url("/"), "HEAD")).headFields).toBeNull();
  });

  it("is up over HTTP/2 (it was down: 'TLS handshake failed')", async () => {
    expect(await checkedResult(h2.url("/"), env)).toMatchObject({ status: "up", statusCode: 200, statusText: "OK", failedStage: null });
  });

  it("answers GET and HEAD with the same phases timed as over HTTP/1.1", async () => {
    for (const method of ["GET", "HEAD"] as const) {
      const answer = await response(h2.url("/"), method);
      expect(answer).toMatchObject({ status: 200, httpVersion: "2", remoteAddress: "127.0.0.1", bodyPrefix: null });
      expect(answer.headers["set-cookie"]).toEqual(["a=1; Path=/", "b=2; Path=/"]);
      expect(answer.tls?.protocol).toMatch(/^TLSv1\.[23]$/);
      expect(answer.timings.tlsMs).not.toBeNull();
      expect(answer.timings.totalMs).toBeGreaterThanOrEqual(answer.timings.firstByteMs ?? Number.POSITIVE_INFINITY);
    }
    expect(h2.methods).toEqual(expect.arrayContaining(["GET / cookie=", "HEAD / cookie="]));
  });

  it("follows redirects by the same rules, in both diagnostics", async () => {
    expect(await checkedResult(h2.url("/old"), env)).toMatchObject({ status: "up", statusCode: 200, finalUrl: h2.url("/new") });
    const port = Number(new URL(h2.url("/")).port);
    const trace = await traceResult(h2.url("/old"), traceEnv(prober, { tracePorts: [port] }));
    expect(trace).toMatchObject({ chainStatus: "redirects_detected", finalStatus: 200, redirects: 1 });
  });

  it("redirect-check with details reads the final page over the chain's one session", async () => {
    const port = Number(new URL(h2.url("/")).port);
    const before = h2.sessions();
    const outcome = await traceRedirects(h2.url("/old"), traceEnv(prober, { tracePorts: [port] }), undefined, { details: true });
    if (outcome.kind !== "result") throw new Error(JSON.stringify(outcome));
    expect(outcome.result.details?.requests.map((request) => [request.method, request.url, request.connectionReused])).toEqual([
      ["HEAD", h2.url("/old"), false],
      ["HEAD", h2.url("/new"), true],
      ["GET", h2.url("/new"), true],
    ]);
    expect(h2.sessions() - before).toBe(1);
  });

  it("reads Strict-Transport-Security over HTTP/2 field by field: the first of two counts, with its warning", async () => {
    const port = Number(new URL(h2.url("/")).port);
    const result = await traceResult(h2.url("/sts-twice"), traceEnv(prober, { tracePorts: [port] }), { details: true });
    expect(result.warnings.map((warning) => warning.code)).toEqual(["hsts_short"]);
    expect(result.details?.requests[0]?.transportSecurity).toEqual({
      hsts: { maxAge: 60, includeSubDomains: false, preload: false },
      hstsInvalid: false,
      h3Advertised: true,
    });
  });

  it("sends the check's cookies over HTTP/2 too: a cookie gate is up", async () => {
    expect(await checkedResult(h2.url("/gate"), env)).toMatchObject({ status: "up", statusCode: 200, redirectHops: [{ status: 302 }] });
    expect(h2.methods).toContain("GET /gate cookie=g=1");
  });

  it("times out at the http stage, as over HTTP/1.1", async () => {
    const outcome = await prober.hop({ url: new URL(h2.url("/hang")), method: "GET", timeoutMs: 300, ports: { kind: "fetch-safe" } });
    expect(outcome).toMatchObject({ kind: "failure", failure: { stage: "http", cause: "RESPONSE_HEAD_TIMEOUT", timedOut: true } });
  });

  it("redirect-check falls back from a refused HEAD to GET, as over HTTP/1.1", async () => {
    const port = Number(new URL(h2.url("/")).port);
    const trace = await traceResult(h2.url("/no-head"), traceEnv(prober, { tracePorts: [port] }));
    expect(trace).toMatchObject({ chainStatus: "healthy", finalStatus: 200 });
    expect(trace.warnings.map((warning) => warning.code)).toContain("head_refused_get_used");
  });

  it("skips an interim 103 Early Hints", async () => {
    expect(await response(h2.url("/hints"))).toMatchObject({ status: 200, httpVersion: "2" });
  });

  it("a 5xx over HTTP/2 is down, as over HTTP/1.1", async () => {
    expect(await checkedResult(h2.url("/broken"), env)).toMatchObject({
      status: "down",
      statusCode: 502,
      reason: "Server returned 502 Bad Gateway",
    });
  });

  it("a stream reset without a response is an http failure naming HTTP/2", async () => {
    expect(await failure(h2.url("/reset"))).toMatchObject({
      stage: "http",
      cause: "HTTP2_STREAM_ERROR",
      reason: "The server reset the HTTP/2 stream without a response",
    });
  });

  it("reads a body prefix over HTTP/2 when asked", async () => {
    const answer = await response(h2.url("/page"), "GET", 64 * 1024);
    expect(Buffer.from(answer.bodyPrefix ?? []).toString()).toBe("<html><meta http-equiv=refresh content=0;url=/next></html>");
    expect((await response(h2.url("/page"), "GET", 10)).bodyPrefix?.length).toBe(10);
  });
});

describe("a same-origin redirect over HTTP/2", () => {
  const hopAfter = async (from: string, to: string, reuseOn: Prober = prober) => {
    const first = await reuseOn.hop({ url: new URL(h2.url(from)), method: "GET", timeoutMs: 2_000, ports: { kind: "fetch-safe" } });
    if (first.kind !== "response") throw new Error(JSON.stringify(first));
    const reuse = first.response.keptConnection ?? undefined;
    const second = await reuseOn.hop({
      url: new URL(h2.url(to)),
      method: "GET",
      timeoutMs: 2_000,
      ports: { kind: "fetch-safe" },
      ...(reuse === undefined ? {} : { reuse }),
    });
    if (second.kind !== "response") throw new Error(JSON.stringify(second));
    return { first: first.response, second: second.response };
  };

  it.each([
    ["a redirect with no body", "/old"],
    ["a redirect with a body (its stream is cancelled, the session goes on)", "/moved-with-body"],
  ])("%s: the next request is a new stream on the same session, with no connect or TLS phase, as browsers send it", async (_case, from) => {
    const before = h2.sessions();
    const { first, second } = await hopAfter(from, "/new");
    expect(first).toMatchObject({ status: from === "/old" ? 301 : 302, httpVersion: "2", connectionReused: false });
    expect(first.keptConnection).not.toBeNull();
    expect(second).toMatchObject({
      status: 200,
      httpVersion: "2",
      connectionReused: true,
      keptConnection: null,
      remoteAddress: "127.0.0.1",
    });
    expect(second.timings).toMatchObject({ connectMs: null, tlsMs: null });
    // The connection's TLS, verified when it was made, is the reused request's too.
    expect(second.tls).toEqual(first.tls);
    expect(h2.sessions() - before).toBe(1);
  });

  it("is-site-down through a redirect over HTTP/2 uses one session", async () => {
    const before = h2.sessions();
    expect(await checkedResult(h2.url("/old"), env)).toMatchObject({ status: "up", statusCode: 200, finalUrl: h2.url("/new") });
    expect(h2.sessions() - before).toBe(1);
  });

  it("a session the server sends GOAWAY on is not used: the next request dials", async () => {
    const before = h2.sessions();
    const { second } = await hopAfter("/old-then-goaway", "/new");
    expect(second).toMatchObject({ status: 200, connectionReused: false });
    expect(second.timings.tlsMs).toEqual(expect.any(Number));
    expect(h2.sessions() - before).toBe(2);
  });

  it("a 408 over HTTP/2 is the site's answer, not asked again (it has no idle-connection meaning there)", async () => {
    const asked = h2.methods.length;
    const { second } = await hopAfter("/to-timeout", "/timeout");
    expect(second).toMatchObject({ status: 408, connectionReused: true });
    expect(h2.methods.slice(asked).filter((line) => line.startsWith("GET /timeout "))).toHaveLength(1);
  });

  it("SITEDIAG_REUSE_CONNECTIONS=false keeps no session", async () => {
    const dialling = loopbackProber({ ca: pki.caPem, reuseConnections: false });
    try {
      // Made in the test, so the suite's setup did not wait for its probe thread's boot (seconds from source on a busy machine).
      await dialling.ready?.();
      const before = h2.sessions();
      const { first, second } = await hopAfter("/old", "/new", dialling);
      expect(first.keptConnection).toBeNull();
      expect(second.connectionReused).toBe(false);
      expect(h2.sessions() - before).toBe(2);
    } finally {
      await dialling.close();
    }
  });
});

describe("ALPN", () => {
  it("a server that picks http/1.1 is spoken to in HTTP/1.1", async () => {
    expect(await response(await startTls(pki.valid, ["http/1.1"]))).toMatchObject({ status: 200, httpVersion: "1.1" });
  });

  it("a server that picks nothing (no ALPN at all) is spoken to in HTTP/1.1", async () => {
    expect(await response(await startTls(pki.valid, undefined))).toMatchObject({ status: 200, httpVersion: "1.1" });
  });

  it("a server that accepts neither h2 nor http/1.1 fails at tls, naming ALPN", async () => {
    const url = await startTls(pki.valid, ["h3"]);
    expect(await failure(url)).toMatchObject({
      stage: "tls",
      cause: "ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL",
      reason: "TLS handshake failed: the server accepts neither h2 nor http/1.1 in ALPN",
      timedOut: false,
    });
  });
});

describe("certificate chains", () => {
  const INCOMPLETE =
    "The server's certificate chain is incomplete (missing intermediate certificate); some browsers repair this, most clients do not";

  it("a leaf sent with its intermediate is up", async () => {
    const url = await startTls({ key: pki.viaIntermediate.key, cert: pki.viaIntermediate.cert + pki.intermediatePem }, ["http/1.1"]);
    expect(await checkedResult(url, env)).toMatchObject({ status: "up", statusCode: 200 });
  });

  it("a leaf sent without its intermediate is an incomplete chain, and the site stays down", async () => {
    const url = await startTls(pki.viaIntermediate, ["http/1.1"]);
    expect(await failure(url)).toMatchObject({ stage: "tls", cause: "CERT_CHAIN_INCOMPLETE", reason: INCOMPLETE, timedOut: false });
    expect(await checkedResult(url, env)).toMatchObject({ status: "down", failedStage: "tls", reason: INCOMPLETE, statusCode: null });
  });

  it("a leaf from an issuer nobody trusts is still an untrusted issuer", async () => {
    const url = await startTls(pki.untrustedIssuer, ["http/1.1"]);
    expect(await failure(url)).toMatchObject({
      stage: "tls",
      cause: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      reason: "TLS certificate is not issued by a trusted authority",
    });
  });

  it("a certificate for another host still fails the name check (verification is ours now, and complete)", async () => {
    const url = await startTls(pki.wrongHost, ["http/1.1"]);
    expect(await failure(url)).toMatchObject({ stage: "tls", cause: "ERR_TLS_CERT_ALTNAME_INVALID" });
  });
});
