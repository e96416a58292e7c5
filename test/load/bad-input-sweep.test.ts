import { once } from "node:events";
import { type AddressInfo, createServer, type Server } from "node:net";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { seededRandom as prng } from "../fixtures/seeded-random.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type AccessTestService, startTestService } from "../fixtures/service-harness.js";
import { bounded } from "../fixtures/bounded-calls.js";
import { HTTP2_GOAWAY, http2FrameTypes, parseHttp1, rawExchange, type RawReply } from "../fixtures/raw-exchange.js";

/** The REST envelope ({ok, error: {code, message}}) or, on the Connect door, Connect's error ({code, message}). */
interface Envelope {
  ok?: unknown;
  error?: { code?: unknown; message?: unknown };
  code?: unknown;
  message?: unknown;
}

describe("bad input sweep", () => {
  let forbidden: Server;
  let forbiddenPort: number;
  let forbiddenConnections = 0;
  let dns: DnsServer;
  let targets: HttpTargets;
  let access: AccessTestService;
  const agent = new Agent({ connections: 32 });

  beforeAll(async () => {
    // 127.0.0.2 is outside the allowed range of this service: nothing may ever connect here.
    forbidden = createServer((socket) => {
      forbiddenConnections++;
      socket.destroy();
    });
    forbidden.listen(0, "127.0.0.2");
    await once(forbidden, "listening");
    forbiddenPort = (forbidden.address() as AddressInfo).port;
    dns = await startDnsServer();
    dns.answer("forbidden.test", { a: ["127.0.0.2"] });
    dns.answer("mixed.test", { a: ["127.0.0.1", "127.0.0.2"] });
    targets = await startHttpTargets({
      routes: {
        "/up": { kind: "respond", status: 200 },
        "/to-forbidden": { kind: "redirect", status: 302, location: `http://127.0.0.2:${forbiddenPort}/` },
      },
    });
    access = await startTestService({
      as: "access",
      config: { allowCidrs: ["127.0.0.1/32"], dnsServers: [dns.server], tracePorts: [targets.httpPort, forbiddenPort] },
    });
  });
  afterAll(async () => {
    await agent.close();
    await access?.close();
    await targets?.close();
    await dns?.close();
    await new Promise<void>((resolve) => forbidden?.close(() => resolve()));
  });

  async function rest(path: string, query: string, headers: Record<string, string> = { "x-api-key": access.key }) {
    const response = await request(`${access.url}${path}?${query}`, { dispatcher: agent, headers });
    const text = await response.body.text();
    let body: Envelope | undefined;
    try {
      body = JSON.parse(text) as Envelope;
    } catch {
      body = undefined;
    }
    return { status: response.statusCode, body, text };
  }

  /** A 4xx whose body is a JSON error, or a 200 diagnostic: anything else is a defect. */
  function wellFormed(answer: { status: number; body: Envelope | undefined }): boolean {
    if (answer.status === 200) return answer.body?.ok === true;
    const restError = answer.body?.ok === false && typeof answer.body.error?.code === "string";
    const connectError = typeof answer.body?.code === "string" && typeof answer.body.message === "string";
    return answer.status >= 400 && answer.status < 500 && (restError || connectError);
  }

  /** Over a raw connection: a closed connection with nothing said, a bare 4xx and close (Node's parser), or a JSON 4xx. */
  function rawWellFormed(reply: RawReply): boolean {
    if (reply.bytes.length === 0) return reply.closedByServer;
    const parsed = parseHttp1(reply.bytes);
    if (parsed === undefined) return false;
    if (parsed.status === 200) return wellFormed({ status: 200, body: jsonOf(parsed.body) });
    if (parsed.status < 400 || parsed.status >= 500) return false;
    if (parsed.body === "") return reply.closedByServer;
    return wellFormed({ status: parsed.status, body: jsonOf(parsed.body) });
  }

  function jsonOf(text: string): Envelope | undefined {
    try {
      return JSON.parse(text) as Envelope;
    } catch {
      return undefined;
    }
  }

  it("refuses every spelling of a non-public target with a JSON 400 and never connects to it", async () => {
    const p = forbiddenPort;
    const spellings = [
      `http://127.0.0.2:${p}/`,
      `http://127.0.0.2.:${p}/`,
      `http://2130706434:${p}/`,
      `http://0x7f000002:${p}/`,
      `http://0177.0.0.2:${p}/`,
      `http://0x7f.0.0.2:${p}/`,
      `http://127.2:${p}/`,
      `http://127.0.2:${p}/`,
      `http://%31%32%37.0.0.2:${p}/`,
      `http://[::ffff:127.0.0.2]:${p}/`,
      `http://[::ffff:7f00:2]:${p}/`,
      `http://[0:0:0:0:0:ffff:127.0.0.2]:${p}/`,
      `http://forbidden.test:${p}/`,
      `http://FORBIDDEN.test.:${p}/`,
      `http://mixed.test:${p}/`,
      `HTTP://127.0.0.2:${p}/x?y#z`,
      `https://127.0.0.2:${p}/`,
      `http://user:pw@127.0.0.2:${p}/`,
      `http://127.0.0.1:${p}@127.0.0.2:${p}/`,
      `http:\\\\127.0.0.2:${p}\\`,
      `http://127.0.0.2:${p}/`.replace("http", "\thttp"),
      `http://127.0.0.2:0${p}/`,
    ];
    for (const tool of ["is-site-down", "redirect-check"]) {
      for (const spelling of spellings) {
        const answer = await rest(`/api/v1/${tool}`, `url=${encodeURIComponent(spelling)}`);
        expect({ spelling, tool, status: answer.status, wellFormed: wellFormed(answer) }).toEqual({
          spelling,
          tool,
          status: 400,
          wellFormed: true,
        });
      }
    }
    // A redirect into the forbidden range is followed by nothing: the diagnostic says so, no packet leaves.
    const redirected = await rest("/api/v1/is-site-down", `url=${encodeURIComponent(targets.url("/to-forbidden"))}`);
    expect(redirected.status).toBe(200);
    expect(JSON.parse(redirected.text)).toMatchObject({
      ok: true,
      data: { status: "down", failedStage: "http", reason: "Redirect to a non-public address was refused" },
    });
    expect(forbiddenConnections).toBe(0);
  });

  it("answers thousands of generated malformed URLs with well-formed JSON and no 5xx", async () => {
    const random = prng(20_240_607);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    // Hosts are only loopback forms, forbidden forms and names the loopback DNS fixture answers: never a public address.
    const schemes = [
      "http://",
      "https://",
      "HTTP://",
      "http:/",
      "http:",
      "ftp://",
      "javascript:",
      "file://",
      "",
      "//",
      "http:\\\\",
      "ws://",
      "h\ttp://",
    ];
    const hosts = [
      "127.0.0.1",
      "127.0.0.2",
      "forbidden.test",
      "nowhere.test",
      "",
      "[",
      "[::1",
      "[::1]",
      "a..b.test",
      "%00",
      "ex ample.test",
      "-.test",
      "xn--.test",
      "é.test",
      "a".repeat(300) + ".test",
      "\u0000",
      "@",
      "user@",
      "user:pw@127.0.0.1",
      "0x7f000002",
      "[fe80::1%25eth0]",
      "[::ffff:127.0.0.2]",
    ];
    const ports = ["", ":", `:${targets.httpPort}`, `:${forbiddenPort}`, ":0", ":65536", ":99999", ":-1", ":abc", ":80:80", ":1"];
    const paths = [
      "",
      "/",
      "/up",
      "/%zz",
      "/%",
      "/\u0000",
      "/?",
      "/#",
      "/a b",
      `/${"x".repeat(3_000)}`,
      "/..%2f..%2f",
      "/\r\nx-injected: 1",
      "?url=http://127.0.0.2/",
    ];
    const inputs = Array.from({ length: 2_500 }, () => `${pick(schemes)}${pick(hosts)}${pick(ports)}${pick(paths)}`);
    const answers = await bounded(inputs.length, 32, 45_000, async (index) => {
      const input = inputs[index] as string;
      const answer = await rest(index % 2 === 0 ? "/api/v1/is-site-down" : "/api/v1/redirect-check", `url=${encodeURIComponent(input)}`);
      return { input, status: answer.status, wellFormed: wellFormed(answer) };
    });
    expect(answers.filter((answer) => !answer.wellFormed || answer.status >= 500)).toEqual([]);
    expect(answers.filter((answer) => answer.status === 400).length).toBeGreaterThan(inputs.length / 2);
    expect(forbiddenConnections).toBe(0);
  }, 50_000);

  it("answers oversized and oddly encoded query strings with a JSON 4xx or a closed connection", async () => {
    const key = `api_key=${access.key}`;
    const queries = [
      "",
      "url=",
      "url",
      "url=%",
      "url=%E0%A4%A",
      "url=%ZZ",
      "url=%00",
      "url=%C0%AF",
      "url=http%3A%2F%2F127.0.0.2%2F",
      `url=${encodeURIComponent(targets.url("/up"))}&url=${encodeURIComponent(targets.url("/up"))}`,
      `url=${encodeURIComponent(targets.url("/up"))}&${key}&${key}`,
      `url=${"a".repeat(2_049)}`,
      `url=${encodeURIComponent(`http://127.0.0.1/${"x".repeat(5_000)}`)}`,
      `url=http://127.0.0.1/&${"x=1&".repeat(2_000)}`,
      "url=http:%2F%2F127.0.0.1;evil",
      "url=+http://127.0.0.1/+",
      "url=%F0%9F%92%A9",
      "url[]=x&url[0]=y",
      "api_key=&url=x",
    ];
    for (const query of queries) {
      const answer = await rest("/api/v1/is-site-down", query, query.includes("api_key=") ? {} : { "x-api-key": access.key });
      expect({
        query: query.slice(0, 80),
        ok: answer.status < 500 && (answer.status >= 400 || answer.status === 200) && wellFormed(answer),
      }).toEqual({
        query: query.slice(0, 80),
        ok: true,
      });
    }
    // Past the header limit the request never reaches a handler: Node's parser answers and closes.
    const huge = await rawExchange(
      access.port,
      `GET /api/v1/is-site-down?url=${"a".repeat(70_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(rawWellFormed(huge)).toBe(true);
    expect(forbiddenConnections).toBe(0);
  });

  it("answers odd headers with a JSON 4xx or a closed connection", async () => {
    const path = `/api/v1/is-site-down?url=${encodeURIComponent(targets.url("/up"))}`;
    const requests = [
      `GET ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${access.key}\r\nx-api-key: sd_other\r\nConnection: close\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: sd_\u00e9\u00e9\u00e9\r\nConnection: close\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${"k".repeat(20_000)}\r\nConnection: close\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nx-api-key:\r\n ${access.key}\r\nConnection: close\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nbad header: 1\r\nConnection: close\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${access.key}\r\nContent-Type: application/grpc\r\nConnection: close\r\n\r\n`,
      `GET ${path} HTTP/9.9\r\nHost: x\r\nConnection: close\r\n\r\n`,
      `BREW ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      `GET ${path}\r\n\r\n`,
      "\u0016\u0003\u0001\u0000\u00a5\u0001\u0000\u0000\u00a1\u0003\u0003",
      `POST /sitediag.v1.DiagnosticsService/CheckSite HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9\r\nx-api-key: ${access.key}\r\nConnection: close\r\n\r\n{"url":}}`,
    ];
    for (const raw of requests) {
      const reply = await rawExchange(access.port, Buffer.from(raw, "latin1"));
      expect({ request: raw.slice(0, 60), wellFormed: rawWellFormed(reply), reply: reply.bytes.toString("latin1").slice(0, 200) }).toEqual({
        reply: reply.bytes.toString("latin1").slice(0, 200),
        request: raw.slice(0, 60),
        wellFormed: true,
      });
    }
    expect(forbiddenConnections).toBe(0);
  });

  it("answers a misbehaving HTTP/2 client with GOAWAY or a close, and keeps serving", async () => {
    const preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
    const frame = (length: number, type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)) => {
      const head = Buffer.alloc(9);
      head.writeUIntBE(length, 0, 3);
      head.writeUInt8(type, 3);
      head.writeUInt8(flags, 4);
      head.writeUInt32BE(stream, 5);
      return Buffer.concat([head, payload]);
    };
    const settings = frame(0, 4, 0, 0);
    const attempts: Buffer[] = [
      Buffer.concat([preface, Buffer.from("this is not a frame at all, just noise ".repeat(4))]),
      Buffer.concat([preface, frame(5, 4, 0, 0, Buffer.alloc(5))]), // SETTINGS with a length not a multiple of 6
      Buffer.concat([preface, settings, frame(4, 1, 4, 0, Buffer.from([0x82, 0x86, 0x84, 0x41]))]), // HEADERS on stream 0
      Buffer.concat([preface, settings, frame(20_000, 0, 0, 1, Buffer.alloc(20_000))]), // DATA larger than the frame limit
      Buffer.concat([preface, settings, frame(3, 1, 4, 1, Buffer.from([0xff, 0xff, 0xff]))]), // undecodable HPACK
      Buffer.concat([preface, settings, frame(8, 6, 0, 1, Buffer.alloc(8))]), // PING on a stream
      Buffer.from("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n", "latin1"), // a preface that goes wrong at the end
    ];
    for (const attempt of attempts) {
      const reply = await rawExchange(access.port, attempt, 3_000);
      const http1 = parseHttp1(reply.bytes);
      // The broken preface is an HTTP/1.1 parse error (a bare 400 and close). HTTP/2 connection errors are
      // answered with GOAWAY (RFC 9113 §5.4.1), or by closing the connection outright.
      const answered =
        http1 !== undefined ? rawWellFormed(reply) : reply.closedByServer || http2FrameTypes(reply.bytes).includes(HTTP2_GOAWAY);
      const sent = attempt.subarray(24, 40).toString("hex");
      expect({ sent, answered, reply: reply.bytes.toString("hex").slice(0, 120) }).toEqual({
        sent,
        answered: true,
        reply: reply.bytes.toString("hex").slice(0, 120),
      });
    }
    const healthy = await rest("/api/v1/is-site-down", `url=${encodeURIComponent(targets.url("/up"))}`);
    expect(healthy.status).toBe(200);
    expect(forbiddenConnections).toBe(0);
  });
});
