import { once } from "node:events";
import { createServer as createHttpsServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HopOutcome, Prober } from "../../src/probe/hop-types.js";
import { createProber } from "../../src/probe/prober.js";
import { USER_AGENT } from "../../src/package-info.js";
import { startDnsServer } from "../fixtures/dns-server.js";
import { getTestPki, type KeyPair } from "../fixtures/test-ca.js";
import { startRawTarget, type RawBehaviour, type RawTarget } from "../fixtures/raw-targets.js";
import { closedLoopbackPort } from "../../testkit/loopback-ports.js";

const ANY_PORT = { kind: "fetch-safe" } as const;
let prober: Prober;
const toClose: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const pki = await getTestPki();
  // The certificates name "localhost": the loopback DNS fixture answers it, so no query leaves the machine.
  const dns = await startDnsServer();
  dns.answer("localhost", { a: ["127.0.0.1"] });
  toClose.push(() => dns.close());
  prober = createProber({ allowCidrs: ["127.0.0.0/8"], dnsServers: [dns.server], ca: pki.caPem, userAgent: USER_AGENT });
});

afterAll(async () => {
  await Promise.all(toClose.map((close) => close()));
  await prober.close();
});

async function raw(behaviour: RawBehaviour): Promise<RawTarget> {
  const target = await startRawTarget(behaviour);
  toClose.push(() => target.close());
  return target;
}

async function https(pair: KeyPair): Promise<string> {
  const server: Server = createHttpsServer(pair, (_req, res) => res.end("ok"));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  toClose.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `https://localhost:${(server.address() as AddressInfo).port}/`;
}

function expectFailure(outcome: HopOutcome) {
  if (outcome.kind !== "failure") throw new Error(`expected a failure, got ${JSON.stringify(outcome)}`);
  return outcome.failure;
}

function hop(url: string, timeoutMs = 2_000, signal?: AbortSignal) {
  return prober.hop({ url: new URL(url), method: "GET", timeoutMs, ports: ANY_PORT, ...(signal ? { signal } : {}) });
}

describe("connect stage", () => {
  it("a closed port is refused", async () => {
    // Not a port the kernel chose and this let go: a `listen(0)` of a file beside this one could be given it.
    const port = await closedLoopbackPort();
    const failure = expectFailure(await hop(`http://127.0.0.1:${port}/`));
    expect(failure).toMatchObject({
      stage: "connect",
      cause: "ECONNREFUSED",
      timedOut: false,
      reason: "Connection refused",
      remoteAddress: "127.0.0.1",
    });
  });
});

describe("tls stage", () => {
  it.each([
    ["expired", "CERT_HAS_EXPIRED", "TLS certificate has expired"],
    ["selfSigned", "DEPTH_ZERO_SELF_SIGNED_CERT", "TLS certificate is self-signed"],
    ["wrongHost", "ERR_TLS_CERT_ALTNAME_INVALID", "TLS certificate does not match the host name"],
  ] as const)("a %s certificate fails with %s", async (which, cause, reason) => {
    const pki = await getTestPki();
    const failure = expectFailure(await hop(await https(pki[which])));
    expect(failure).toMatchObject({ stage: "tls", cause, reason, timedOut: false });
  });

  it("a server that never completes the handshake times out at tls", async () => {
    const target = await raw({ kind: "silent" });
    const failure = expectFailure(await hop(`https://127.0.0.1:${target.port}/`, 300));
    expect(failure).toMatchObject({ stage: "tls", cause: "ERR_TLS_HANDSHAKE_TIMEOUT", timedOut: true });
  });
});

describe("http stage", () => {
  it("headers never sent: timeout at http", async () => {
    const target = await raw({ kind: "silent" });
    const failure = expectFailure(await hop(target.url, 300));
    expect(failure).toMatchObject({ stage: "http", cause: "RESPONSE_HEAD_TIMEOUT", timedOut: true, remoteAddress: "127.0.0.1" });
    expect(failure.elapsedMs).toBeGreaterThanOrEqual(290);
    expect(failure.elapsedMs).toBeLessThan(1_500);
  });

  it("slow-dribbled headers are cut off by the hop timeout", async () => {
    const target = await raw({ kind: "dribble", intervalMs: 20 });
    const failure = expectFailure(await hop(target.url, 400));
    expect(failure).toMatchObject({ stage: "http", cause: "RESPONSE_HEAD_TIMEOUT", timedOut: true });
    expect(failure.elapsedMs).toBeLessThan(1_500);
    expect(target.bytesWritten()).toBeLessThan(1_000);
  });

  it("garbage bytes are an invalid HTTP response", async () => {
    const target = await raw({ kind: "garbage" });
    const failure = expectFailure(await hop(target.url));
    expect(failure.stage).toBe("http");
    expect(failure.cause).toMatch(/^(HPE_|HTTP_PARSE_ERROR$)/);
    expect(failure.reason).toBe("The server sent an invalid HTTP response");
    expect(failure.timedOut).toBe(false);
  });

  it.each([
    ["a page with no status line, then close", "<html><body>It works</body></html>\n"],
    ["text holding an empty line, as a head would", "hello\r\n\r\nworld"],
    ["two bytes, then close", "ok"],
  ])("an HTTP/0.9 answer (%s) is named as such, not a connection closed without a response", async (_, answer) => {
    const target = await raw({ kind: "bytes", answer: () => Buffer.from(answer, "latin1") });
    const failure = expectFailure(await hop(target.url));
    expect(failure).toMatchObject({ stage: "http", cause: "HTTP_09_RESPONSE", timedOut: false });
    expect(failure.reason).toBe("The server answered without a status line (HTTP/0.9), which browsers refuse");
  });

  it.each([["SSH-2.0-OpenSSH_9.6\r\n"], ["220 mail.test ESMTP\r\n"], ["+OK POP3 ready\r\n"], ["\u0000\u0001binary"]])(
    "another protocol's greeting or binary bytes (%j) is an invalid HTTP response, not HTTP/0.9",
    async (answer) => {
      const target = await raw({ kind: "bytes", answer: () => Buffer.from(answer, "latin1") });
      expect(expectFailure(await hop(target.url)).cause).toBe("HTTP_PARSE_ERROR");
    },
  );

  it("a status line in any case, or arriving a byte at a time, is still read as one", async () => {
    const lower = await raw({ kind: "bytes", answer: () => Buffer.from("http/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok", "latin1") });
    // The head reader takes only "HTTP/": lower case is an invalid response, never HTTP/0.9.
    expect(expectFailure(await hop(lower.url)).cause).toBe("HTTP_PARSE_ERROR");
    const pieces = await raw({
      kind: "pieces",
      pieces: () => ["H", "T", "TP/1.1 200 OK\r\n", "content-length: 2\r\nconnection: close\r\n\r\nok"],
      gapMs: 20,
    });
    const outcome = await hop(pieces.url);
    expect(outcome.kind).toBe("response");
  });

  it("a reset after the request was accepted fails at http", async () => {
    const target = await raw({ kind: "reset" });
    const failure = expectFailure(await hop(target.url));
    expect(failure).toMatchObject({
      stage: "http",
      cause: "ECONNRESET",
      timedOut: false,
      reason: "The server closed the connection without a response",
    });
    expect(target.connections()).toBe(1);
  });

  it("a reset the moment the connection is accepted is a reset, whichever side of connect() it lands", async () => {
    // The kernel completes the handshake before the server's accept; the RST
    // can reach us before or after Node reports the connect.
    const target = await raw({ kind: "reset-on-accept" });
    const failure = expectFailure(await hop(target.url));
    expect(["connect", "http"]).toContain(failure.stage);
    expect(["ECONNRESET", "CONNECTION_CLOSED"]).toContain(failure.cause);
    expect(failure.timedOut).toBe(false);
  });

  it("oversized headers are refused, not buffered", async () => {
    const target = await raw({ kind: "huge-headers", bytes: 512 * 1024 });
    const failure = expectFailure(await hop(target.url));
    expect(failure).toMatchObject({
      stage: "http",
      cause: "RESPONSE_HEAD_TOO_LARGE",
      reason: "The server sent response headers that are too large",
      timedOut: false,
    });
  });

  it("an endless body: the head is answered and the body is never drained", async () => {
    const target = await raw({ kind: "endless-body" });
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 3; i++) {
      const outcome = await hop(target.url);
      expect(outcome.kind).toBe("response");
    }
    // What the server got into its own socket buffers plus ours: a few hundred KiB per hop at most.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(target.bytesWritten()).toBeLessThan(3 * 8 * 1024 * 1024);
    const written = target.bytesWritten();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(target.bytesWritten()).toBe(written);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(32 * 1024 * 1024);
  });

  it("the caller's signal ends the hop, reported as timed out at the phase reached", async () => {
    const target = await raw({ kind: "silent" });
    const outer = new AbortController();
    setTimeout(() => outer.abort(), 150);
    const failure = expectFailure(await hop(target.url, 5_000, outer.signal));
    expect(failure).toMatchObject({ stage: "http", timedOut: true, cause: "RESPONSE_HEAD_TIMEOUT" });
    expect(failure.elapsedMs).toBeLessThan(1_000);
  });
});
