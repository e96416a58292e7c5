import http2 from "node:http2";
import net from "node:net";
import { DEFAULT_INTAKE } from "../../../src/config.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DualProtocolListener, listenDualProtocol } from "../../../src/server/door/dual-protocol-listener.js";

// The connection-error check runs every 200 ms here (1 s by default), so a test waits a fraction of the default.
const ERROR_CHECK_MS = 200;
const LIMITS = {
  ...DEFAULT_INTAKE,
  maxHeaderBytes: 16_384,
  headersTimeoutMs: 400,
  keepAliveTimeoutMs: 5_000,
  http2IdleTimeoutMs: 60_000,
  http2ErrorCheckMs: ERROR_CHECK_MS,
};

function listen(limits: typeof LIMITS): Promise<DualProtocolListener> {
  return listenDualProtocol({ ...limits, host: "127.0.0.1", port: 0, handler: (_request, response) => response.end("served") });
}

interface RawReply {
  readonly bytes: Buffer;
  /** False when the server still held the connection open after `waitMs`. */
  readonly closedByServer: boolean;
  readonly closedAfterMs: number;
}

/** Writes `data` on a raw loopback connection and reads until the server closes it or `waitMs` passes. */
function rawExchange(port: number, data: Buffer | string, waitMs: number): Promise<RawReply> {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    let closedByServer = true;
    const socket = net.connect(port, "127.0.0.1", () => socket.write(data));
    const timer = setTimeout(() => {
      closedByServer = false;
      socket.destroy();
    }, waitMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ bytes: Buffer.concat(chunks), closedByServer, closedAfterMs: Date.now() - started });
    });
  });
}

function parseHttp1(bytes: Buffer): { status: number; headers: string; body: string } {
  const text = bytes.toString("utf8");
  const end = text.indexOf("\r\n\r\n");
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1]), headers: text.slice(0, end), body: text.slice(end + 4) };
}

function frame(length: number, type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** The types and (for GOAWAY) error codes of the HTTP/2 frames in `bytes`. */
function frames(bytes: Buffer): { type: number; errorCode: number | null }[] {
  const out: { type: number; errorCode: number | null }[] = [];
  for (let at = 0; at + 9 <= bytes.length; at += 9 + bytes.readUIntBE(at, 3)) {
    const type = bytes.readUInt8(at + 3);
    out.push({ type, errorCode: type === GOAWAY && at + 17 <= bytes.length ? bytes.readUInt32BE(at + 13) : null });
  }
  return out;
}

const GOAWAY = 7;
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
const EMPTY_SETTINGS = frame(0, 4, 0, 0);

describe("connections the parsers reject", () => {
  // A short head timeout for the 408; the HTTP/2 listener's is long, so that its
  // "no stream in time" rule cannot be what closes a connection there.
  let listener: DualProtocolListener;
  let h2Listener: DualProtocolListener;
  beforeAll(async () => {
    listener = await listen(LIMITS);
    h2Listener = await listen({ ...LIMITS, headersTimeoutMs: 10_000 });
  });
  afterAll(async () => {
    for (const each of [listener, h2Listener]) {
      each.destroyAll();
      await each.close();
    }
  });

  describe("HTTP/1.1 requests Node's parser refuses get the JSON error envelope and a close", () => {
    const cases = [
      {
        name: "a header name with a space",
        data: "GET /x HTTP/1.1\r\nHost: x\r\nbad header: 1\r\n\r\n",
        status: 400,
        code: "invalid_argument",
      },
      { name: "a request line that is not HTTP", data: "HELLO THERE\r\n\r\n", status: 400, code: "invalid_argument" },
      {
        name: "a head over 16 KiB",
        data: `GET /x HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(17 * 1024)}\r\n\r\n`,
        status: 431,
        code: "invalid_argument",
      },
      { name: "a head never finished", data: "GET /x HTTP/1.1\r\nHost: x\r\n", status: 408, code: "deadline_exceeded" },
    ];
    for (const { name, data, status, code } of cases) {
      it(`${name}: ${status} ${code}`, async () => {
        const reply = await rawExchange(listener.port, data, 5_000);
        expect(reply.closedByServer).toBe(true);
        const answer = parseHttp1(reply.bytes);
        expect(answer.status).toBe(status);
        expect(answer.headers).toMatch(/^content-type: application\/json; charset=utf-8$/im);
        expect(answer.headers).toMatch(/^connection: close$/im);
        expect(answer.headers).toContain(`Content-Length: ${Buffer.byteLength(answer.body)}`);
        const body = JSON.parse(answer.body) as { ok: boolean; error: { code: string; message: string }; meta: unknown };
        expect(body).toEqual({ ok: false, error: { code, message: expect.any(String) as string }, meta: { tool: null, version: "v1" } });
        expect(body.error.message).not.toBe("");
      });
    }

    it("still serves a well-formed request on a fresh connection", async () => {
      const reply = await rawExchange(listener.port, "GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5_000);
      expect(parseHttp1(reply.bytes)).toMatchObject({ status: 200, body: "served" });
    });
  });

  describe("HTTP/2 connection errors: GOAWAY, then the TCP connection is closed (RFC 9113 §5.4.1)", () => {
    const cases = [
      {
        name: "a SETTINGS frame whose length is not a multiple of 6",
        data: Buffer.concat([PREFACE, frame(5, 4, 0, 0, Buffer.alloc(5))]),
        errorCode: 6,
      },
      {
        name: "a DATA frame over the frame size limit",
        data: Buffer.concat([PREFACE, EMPTY_SETTINGS, frame(20_000, 0, 0, 1, Buffer.alloc(20_000))]),
        errorCode: 6,
      },
      {
        name: "a header block HPACK cannot decode",
        data: Buffer.concat([PREFACE, EMPTY_SETTINGS, frame(3, 1, 4, 1, Buffer.from([0xff, 0xff, 0xff]))]),
        errorCode: 9,
      },
    ];
    for (const { name, data, errorCode } of cases) {
      it(`${name}: GOAWAY with error ${errorCode}, and a close well before the idle timeout`, async () => {
        // Node alone keeps these connections until the 60 s idle timeout configured here.
        const reply = await rawExchange(h2Listener.port, data, 8_000);
        expect(frames(reply.bytes)).toContainEqual({ type: GOAWAY, errorCode });
        expect(reply.closedByServer).toBe(true);
      });
    }

    it("leaves a healthy session that has gone quiet open", async () => {
      const session = http2.connect(`http://127.0.0.1:${h2Listener.port}`);
      session.on("error", () => undefined);
      try {
        const body = await new Promise<string>((resolve, reject) => {
          const stream = session.request({ ":path": "/h2" });
          let text = "";
          stream.on("data", (chunk: Buffer) => (text += chunk.toString()));
          stream.on("end", () => resolve(text));
          stream.on("error", reject);
          stream.end();
        });
        expect(body).toBe("served");
        // Long enough for the check to ping the session and look again, several times.
        await new Promise((wait) => setTimeout(wait, ERROR_CHECK_MS * 3.5));
        expect(session.closed || session.destroyed).toBe(false);
      } finally {
        session.close();
      }
    });

    it("leaves open a quiet raw session that never acknowledges a PING", async () => {
      const reply = await rawExchange(h2Listener.port, Buffer.concat([PREFACE, EMPTY_SETTINGS]), ERROR_CHECK_MS * 3.5);
      expect(reply.closedByServer).toBe(false);
      expect(frames(reply.bytes).map((each) => each.type)).not.toContain(GOAWAY);
    });
  });
});
