import http2 from "node:http2";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_INTAKE } from "../../../src/config.js";
import { type DualProtocolListener, listenDualProtocol, type NodeRequestHandler } from "../../../src/server/door/dual-protocol-listener.js";
import { requestBody } from "../../../src/server/door/request-body.js";

/**
 * closeAfterEarlyAnswer and requestBody on the listener itself, with a
 * handler that does what every door does with a body too large: read until
 * the limit is passed, stop, answer. The answer must arrive whole, the
 * connection must end soon after (HTTP/1.1: lingering close; HTTP/2: a
 * NO_ERROR reset of the stream), and nothing may throw, also when the
 * client is gone before the answer is written.
 */
const LIMITS = { ...DEFAULT_INTAKE, maxHeaderBytes: 16_384, headersTimeoutMs: 5_000, keepAliveTimeoutMs: 1_000, http2IdleTimeoutMs: 5_000 };
const LIMIT = 1_024;
const ANSWER = JSON.stringify({ error: "too large", padding: "x".repeat(4_000) });

let listener: DualProtocolListener | undefined;
afterEach(async () => {
  listener?.destroyAll();
  await listener?.close();
  listener = undefined;
});

/** Reads until LIMIT is passed, then answers 413 after `delayMs` (the answer of a door that had more to do first). */
function tooLargeHandler(delayMs = 0, answered?: (error: unknown) => void): NodeRequestHandler {
  return (request, response) => {
    void (async () => {
      let size = 0;
      for await (const chunk of requestBody(request)) {
        size += chunk.length;
        if (size > LIMIT) break;
      }
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      try {
        response.writeHead(413, { "content-type": "application/json", "content-length": Buffer.byteLength(ANSWER) });
        response.end(ANSWER);
        answered?.(null);
      } catch (error) {
        answered?.(error);
      }
    })();
  };
}

async function start(handler: NodeRequestHandler): Promise<number> {
  listener = await listenDualProtocol({ ...LIMITS, host: "127.0.0.1", port: 0, handler });
  return listener.port;
}

/** Sends a chunked body of `chunks` x 16 KiB, one chunk every 10 ms, reading whatever comes back until the server closes the connection. */
function sendChunked(port: number, chunks: number): Promise<{ reply: string; closedAfterMs: number }> {
  return new Promise((resolve) => {
    // Half-open allowed: the client goes on sending after the server's FIN, as an attacker's would.
    const socket = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    const started = performance.now();
    let reply = "";
    let timer: NodeJS.Timeout | undefined;
    socket.on("data", (data: Buffer) => (reply += data.toString("latin1")));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearInterval(timer);
      resolve({ reply, closedAfterMs: performance.now() - started });
    });
    socket.on("connect", () => {
      socket.write("POST /x HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n");
      let sent = 0;
      timer = setInterval(() => {
        if (sent++ >= chunks || socket.destroyed) return clearInterval(timer);
        socket.write(`4000\r\n${"a".repeat(16_384)}\r\n`);
      }, 10);
    });
  });
}

describe("an answer written before the body was all read", () => {
  it("HTTP/1.1, chunked: the whole answer with Connection: close, then a lingering close while the client keeps sending", async () => {
    const port = await start(tooLargeHandler());
    // 1,000 chunks at 10 ms would take 10 s: the linger discards what comes for 2 s after the answer, then closes.
    const { reply, closedAfterMs } = await sendChunked(port, 1_000);
    expect(reply).toMatch(/^HTTP\/1\.1 413 /);
    expect(reply).toMatch(/^connection: close$/im);
    expect(reply.endsWith(ANSWER)).toBe(true);
    expect(closedAfterMs).toBeGreaterThan(1_900);
    expect(closedAfterMs).toBeLessThan(7_000);
  });

  it("HTTP/1.1: a client gone before the answer is written; the answer touches no socket and throws nothing", async () => {
    const results: unknown[] = [];
    const port = await start(tooLargeHandler(200, (error) => results.push(error)));
    const socket = net.connect(port, "127.0.0.1");
    socket.on("error", () => undefined);
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write(`POST /x HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n800\r\n${"a".repeat(2_048)}\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(results).toEqual([null]);
  });

  it("HTTP/2, no content-length: the whole answer, then RST_STREAM NO_ERROR for the body nobody reads", async () => {
    const port = await start(tooLargeHandler());
    const session = http2.connect(`http://127.0.0.1:${port}`);
    try {
      const outcome = await new Promise<{ status: unknown; text: string; rstCode: number | undefined }>((resolve) => {
        const stream = session.request({ ":method": "POST", ":path": "/x" });
        let status: unknown;
        let text = "";
        stream.on("response", (headers) => (status = headers[":status"]));
        stream.on("data", (data: Buffer) => (text += data.toString()));
        stream.on("error", () => undefined);
        stream.on("close", () => resolve({ status, text, rstCode: stream.rstCode }));
        // More than the limit, and never ended: only the server's reset closes this stream.
        stream.write(Buffer.alloc(8 * 1_024, 0x61));
      });
      expect(outcome).toEqual({ status: 413, text: ANSWER, rstCode: http2.constants.NGHTTP2_NO_ERROR });
    } finally {
      session.destroy();
    }
  });
});
