import http2 from "node:http2";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";

/** Opens a raw TCP connection, writes `data`, and resolves with everything read until the server closes it. */
function rawExchange(port: number, data: string): Promise<{ text: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1", () => socket.write(data));
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve({ text: Buffer.concat(chunks).toString("latin1"), closedAfterMs: Date.now() - started }));
    setTimeout(() => {
      socket.destroy();
      reject(new Error("the server kept the connection open"));
    }, 8_000).unref();
  });
}

describe("request and connection limits", () => {
  let service: ServeTestService;
  let port: number;
  beforeAll(async () => {
    service = await startTestService({ as: "serve", limits: { headersTimeoutMs: 400 } });
    port = Number(new URL(service.url).port);
  });
  afterAll(async () => {
    await service?.close();
  });

  it("answers a request target over 16 KiB with 414 and a JSON error naming the tool of its path, before any route", async () => {
    const long = `${service.url}/api/v1/is-site-down?url=${"a".repeat(17_000)}`;
    const response = await fetch(long, { headers: { "x-api-key": service.key } });
    expect(response.status).toBe(414);
    expect(response.headers.get("x-request-id")).toBeTruthy();
    expect(await response.json()).toMatchObject({
      ok: false,
      error: { code: "invalid_argument" },
      meta: { tool: "is-site-down", version: "v1" },
    });
    const elsewhere = await fetch(`${service.url}/nowhere?x=${"a".repeat(17_000)}`);
    expect(await elsewhere.json()).toMatchObject({ ok: false, meta: { tool: null } });
  });

  it("gives the 414 the CORS headers of every other answer of the port", async () => {
    const origin = { origin: "https://app.example" };
    const refused = await fetch(`${service.url}/api/v1/is-site-down?url=${"a".repeat(17_000)}`, { headers: origin });
    const answered = await fetch(`${service.url}/api/v1/is-site-down`, { headers: Object.assign({ "x-api-key": service.key }, origin) });
    expect(refused.status).toBe(414);
    expect(answered.status).toBe(400);
    for (const name of ["access-control-allow-origin", "access-control-expose-headers"]) {
      expect(refused.headers.get(name), name).toBe(answered.headers.get(name));
      expect(refused.headers.get(name), name).toBeTruthy();
    }
  });

  it("reads a request target's path up to its query only, as the router does: a '#' in it (never sent by a client) is part of a path no route has", async () => {
    const short = await rawExchange(
      port,
      "GET /api/v1/is-site-down#x?url=http://127.0.0.1/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    expect(short.text).toMatch(/^HTTP\/1\.1 404 /);
    const long = await rawExchange(
      port,
      `GET /api/v1/is-site-down#x?url=${"a".repeat(17_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(long.text).toMatch(/^HTTP\/1\.1 414 /);
    expect(long.text).toContain('"meta":{"tool":null');
  });

  it("judges any url the HTTP layer holds in the diagnostic: a 10,000-character url is a charged 400 of its operation", async () => {
    const before = await fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent("http://127.0.0.1:1/")}`, {
      headers: { "x-api-key": service.key },
    });
    const usedBefore = Number(before.headers.get("x-ratelimit-used"));
    const response = await fetch(
      `${service.url}/api/v1/is-site-down?url=${encodeURIComponent(`https://example.com/${"a".repeat(10_000)}`)}`,
      {
        headers: { "x-api-key": service.key },
      },
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as { ok: boolean; error: { code: string; message: string }; meta: { tool: string | null } };
    expect(body).toMatchObject({ ok: false, error: { code: "invalid_argument" }, meta: { tool: "is-site-down" } });
    expect(body.error.message).toMatch(/2048/);
    expect(Number(response.headers.get("x-ratelimit-used"))).toBe(usedBefore + 2);
  });

  it("refuses a request head over 32 KiB on HTTP/1.1 with 431, naming the tool when the request line says it", async () => {
    const { text } = await rawExchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(33 * 1024)}\r\n\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
    const tool = await rawExchange(port, `GET /api/v1/redirect-check?url=x HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(33 * 1024)}\r\n\r\n`);
    expect(tool.text).toMatch(/^HTTP\/1\.1 431 /);
    expect(tool.text).toContain('"meta":{"tool":"redirect-check","version":"v1"}');
  });

  it("drops an HTTP/1.1 client that does not finish its request head in time", async () => {
    const { text } = await rawExchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n");
    expect(text === "" || /^HTTP\/1\.1 408 /.test(text)).toBe(true);
  });

  it("closes an HTTP/2 session that opens no stream in time", async () => {
    const session = http2.connect(service.url);
    session.on("error", () => undefined);
    const closed = await new Promise<boolean>((resolve) => {
      session.once("close", () => resolve(true));
      setTimeout(() => resolve(false), 8_000).unref();
    });
    expect(closed).toBe(true);
  });

  it("keeps serving an HTTP/2 session that opens a stream at once", async () => {
    const session = http2.connect(service.url);
    try {
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const stream = session.request({ ":path": "/healthz" });
        stream.on("response", (headers) => resolve(headers[":status"]));
        stream.on("error", reject);
        stream.resume();
      });
      expect(status).toBe(200);
      await new Promise((wait) => setTimeout(wait, 600));
      expect(session.closed || session.destroyed).toBe(false);
    } finally {
      session.close();
    }
  });
});
