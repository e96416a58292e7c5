import http2 from "node:http2";
import net from "node:net";
import { DEFAULT_INTAKE } from "../../../src/config.js";
import { afterEach, describe, expect, it } from "vitest";
import { type DualProtocolListener, listenDualProtocol } from "../../../src/server/door/dual-protocol-listener.js";
import { startHttpTargets } from "../../fixtures/http-targets.js";
import { startTestService } from "../../fixtures/service-harness.js";

const LIMITS = { ...DEFAULT_INTAKE, maxHeaderBytes: 16_384, headersTimeoutMs: 500, keepAliveTimeoutMs: 1_000, http2IdleTimeoutMs: 5_000 };

function rawExchange(port: number, chunks: Buffer[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (data) => (received += data.toString("latin1")));
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
    socket.on("connect", () => {
      // One byte at a time with pauses: the sniffer must wait for enough bytes to decide. A write after the
      // server closed fails through the socket's error event, which rejects.
      void (async () => {
        for (const chunk of chunks) {
          socket.write(chunk);
          await new Promise((wait) => setTimeout(wait, 5));
        }
      })();
    });
  });
}

describe("one port for HTTP/1.1 and h2c", () => {
  let listener: DualProtocolListener | undefined;
  afterEach(async () => {
    listener?.destroyAll();
    await listener?.close();
    listener = undefined;
  });

  async function start(headersTimeoutMs = LIMITS.headersTimeoutMs): Promise<DualProtocolListener> {
    listener = await listenDualProtocol({
      ...LIMITS,
      headersTimeoutMs,
      host: "127.0.0.1",
      port: 0,
      handler: (request, response) => response.end(`HTTP/${request.httpVersion} ${request.method} ${request.url}`),
    });
    return listener;
  }

  it("hands an HTTP/1.1 request split into single bytes to the HTTP/1.1 server", async () => {
    // A head timeout far beyond what the writes need: 60 writes 5 ms apart take 0.3 s on an idle machine and
    // passed 0.5 s on a busy one (a 408). The timeout that drops a client is the next tests' concern.
    const { port } = await start(30_000);
    const request = Buffer.from("GET /split HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    const answer = await rawExchange(
      port,
      [...request].map((byte) => Buffer.from([byte])),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(answer).toContain("HTTP/1.1 GET /split");
  });

  it("hands a prior-knowledge HTTP/2 connection to the HTTP/2 server", async () => {
    const { port } = await start();
    const session = http2.connect(`http://127.0.0.1:${port}`);
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const stream = session.request({ ":path": "/h2", ":method": "GET" });
        let text = "";
        stream.on("data", (chunk: Buffer) => (text += chunk.toString()));
        stream.on("end", () => resolve(text));
        stream.on("error", reject);
        stream.end();
      });
      expect(body).toBe("HTTP/2.0 GET /h2");
    } finally {
      session.close();
    }
  });

  it("answers a request line that starts like the preface but is not it as HTTP/1.1", async () => {
    const { port } = await start();
    const answer = await rawExchange(port, [Buffer.from("PR"), Buffer.from("OPFIND / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")]);
    expect(answer).toMatch(/^HTTP\/1\.1 /);
    expect(answer).toContain("HTTP/1.1 PROPFIND /");
  });

  it("drops a client that never sends enough to tell its protocol", async () => {
    const { port } = await start();
    const answer = await rawExchange(port, [Buffer.from("PR")]);
    expect(answer).toBe("");
  });
});

describe("graceful close", () => {
  it("lets a diagnostic in flight finish and refuses new connections", async () => {
    const targets = await startHttpTargets({ routes: { "/slow": { kind: "respond", status: 200, delayMs: 400 } } });
    const service = await startTestService();
    try {
      const inFlight = fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(targets.url("/slow"))}`);
      await new Promise((wait) => setTimeout(wait, 100));
      const closed = service.close();
      const response = await inFlight;
      expect(response.status).toBe(200);
      expect(((await response.json()) as { data: { status: string } }).data.status).toBe("up");
      await closed;
      await expect(fetch(`${service.url}/healthz`)).rejects.toThrow();
    } finally {
      await service.close();
      await targets.close();
    }
  });
});
