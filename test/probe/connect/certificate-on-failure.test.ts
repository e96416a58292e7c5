import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { createServer, type Server, type TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HopOutcome, Prober } from "../../../src/probe/hop-types.js";
import { getTestPki, type KeyPair, type TestPki } from "../../fixtures/test-ca.js";
import { loopbackProber } from "../../fixtures/test-env.js";

/**
 * A bare TLS listener: it completes handshakes and counts every application
 * byte that arrives, so a test can prove nothing was sent over a connection
 * whose certificate failed verification.
 */
interface RawTlsListener {
  readonly url: string;
  /** TCP connections accepted (a TLS 1.3 server may not finish its side before the client leaves). */
  connections(): number;
  bytesReceived(): number;
  close(): Promise<void>;
}

async function startRawTlsListener(pair: KeyPair): Promise<RawTlsListener> {
  let connections = 0;
  let received = 0;
  const sockets = new Set<TLSSocket>();
  const server: Server = createServer({ key: pair.key, cert: pair.cert }, (socket) => {
    sockets.add(socket);
    socket.on("data", (chunk: Buffer) => (received += chunk.length));
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("connection", () => connections++);
  server.on("tlsClientError", () => undefined);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/page`,
    connections: () => connections,
    bytesReceived: () => received,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let pki: TestPki;
let prober: Prober;

beforeAll(async () => {
  pki = await getTestPki();
  prober = loopbackProber({ ca: pki.caPem });
});
afterAll(async () => {
  await prober.close();
});

function failed(outcome: HopOutcome) {
  if (outcome.kind !== "failure") throw new Error(`expected a failure, got ${outcome.kind}`);
  return outcome;
}

describe("a certificate that fails verification is still shown, and nothing is sent", () => {
  it.each([
    ["expired", (p: TestPki) => p.expired, "CERT_HAS_EXPIRED", "localhost", "sitediag test CA, sitediag tests"],
    ["self-signed", (p: TestPki) => p.selfSigned, "DEPTH_ZERO_SELF_SIGNED_CERT", "localhost", "localhost"],
    [
      "for another host",
      (p: TestPki) => p.wrongHost,
      "ERR_TLS_CERT_ALTNAME_INVALID",
      "wrong-host.test",
      "sitediag test CA, sitediag tests",
    ],
  ] as const)("%s", async (_label, pick, verifyError, subject, issuer) => {
    const listener = await startRawTlsListener(pick(pki));
    try {
      const outcome = failed(
        await prober.hop({ url: new URL(listener.url), method: "GET", timeoutMs: 3_000, ports: { kind: "fetch-safe" } }),
      );
      expect(outcome.failure).toMatchObject({ stage: "tls", cause: verifyError, timedOut: false, remoteAddress: "127.0.0.1" });
      expect(outcome.trace.tls).toMatchObject({ protocol: expect.stringMatching(/^TLSv1\.[23]$/) as string, verifyError });
      const certificate = outcome.trace.tls?.certificate;
      expect(certificate).toMatchObject({ subject, issuer, chainLength: 1 });
      expect(certificate?.fingerprintSha256).toMatch(/^(?:[0-9A-F]{2}:){31}[0-9A-F]{2}$/);
      expect(certificate?.serialNumber).toMatch(/^[0-9A-F]+$/);
      expect(Date.parse(certificate?.validTo ?? "")).not.toBeNaN();
      // Connected and shook hands, so the partial timings say so; no first byte ever came.
      expect(outcome.trace.timings.connectMs).not.toBeNull();
      expect(outcome.trace.timings.tlsMs).not.toBeNull();
      expect(outcome.trace.timings.firstByteMs).toBeNull();
      expect(outcome.trace.remoteFamily).toBe(4);
      // Let any in-flight bytes land before counting.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(listener.connections()).toBe(1);
      expect(listener.bytesReceived()).toBe(0);
    } finally {
      await listener.close();
    }
  });

  it("a valid certificate is described in full on the response, and the request goes through", async () => {
    const listener = await startRawTlsListener(pki.valid);
    try {
      const outcome = await prober.hop({ url: new URL(listener.url), method: "GET", timeoutMs: 300, ports: { kind: "fetch-safe" } });
      // The raw listener never answers HTTP: the request was sent, and timed out waiting.
      expect(failed(outcome).failure).toMatchObject({ stage: "http", timedOut: true });
      expect(failed(outcome).trace.tls).toMatchObject({
        verifyError: null,
        certificate: { subject: "localhost", subjectAltNames: ["DNS:localhost", "IP Address:127.0.0.1", "IP Address:0:0:0:0:0:0:0:1"] },
      });
      expect(listener.bytesReceived()).toBeGreaterThan(0);
    } finally {
      await listener.close();
    }
  });
});
