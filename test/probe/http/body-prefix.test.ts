import { once } from "node:events";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bodyFraming, bodyPrefixReader } from "../../../src/probe/http/body-prefix.js";
import type { Prober } from "../../../src/probe/hop-types.js";
import { type RawTarget, startRawTarget } from "../../fixtures/raw-targets.js";
import { loopbackProber } from "../../fixtures/test-env.js";

/** The optional body prefix of a hop (for a colleague looking for a meta refresh in the first 64 KiB of HTML). */
const page = '<html><head><meta http-equiv="refresh" content="0; url=/next"></head></html>';
const ANSWERS: Readonly<Record<string, string>> = {
  "/length": `HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${page.length}\r\n\r\n${page}`,
  "/chunked": `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n10;ext=1\r\n${page.slice(0, 16)}\r\n${(page.length - 16).toString(16)}\r\n${page.slice(16)}\r\n0\r\ntrailer: x\r\n\r\n`,
  "/close-delimited": `HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n${page}`,
  "/te-beats-cl": `HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
  "/length-shorter-than-sent": "HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nbodyAND-MORE",
  "/no-content": "HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n\r\nhello",
  "/bad-chunk": "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
  "/conflicting-lengths": "HTTP/1.1 200 OK\r\ncontent-length: 4\r\ncontent-length: 5\r\n\r\nhello",
  "/interim-then-body": `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: ${page.length}\r\n\r\n${page}`,
  // A framing field of 200,000 list items (issue 28): within the head limit, past the engine's argument limit.
  "/huge-coding-list": `HTTP/1.1 200 OK\r\ntransfer-encoding: ${",".repeat(200_000)}chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
};

let target: RawTarget;
let endless: RawTarget;
let stalled: Server;
const stalledSockets = new Set<Socket>();
let prober: Prober;

beforeAll(async () => {
  target = await startRawTarget({
    kind: "bytes",
    answer: (path) => Buffer.from(ANSWERS[path] ?? "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n", "latin1"),
  });
  endless = await startRawTarget({ kind: "endless-body" });
  // A head, ten bytes of a 100-byte body, then nothing.
  stalled = createServer((socket) => {
    stalledSockets.add(socket);
    socket.on("error", () => undefined);
    socket.once("data", () => socket.write("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n0123456789"));
  });
  stalled.listen(0, "127.0.0.1");
  await once(stalled, "listening");
  prober = loopbackProber();
});
afterAll(async () => {
  await target.close();
  await endless.close();
  for (const socket of stalledSockets) socket.destroy();
  await new Promise((resolve) => stalled.close(resolve));
  await prober.close();
});

async function prefix(url: string, bytes: number | undefined, method: "GET" | "HEAD" = "GET", timeoutMs = 2_000) {
  const outcome = await prober.hop({
    url: new URL(url),
    method,
    timeoutMs,
    ports: { kind: "fetch-safe" },
    ...(bytes === undefined ? {} : { bodyPrefixBytes: bytes }),
  });
  if (outcome.kind !== "response") throw new Error(JSON.stringify(outcome));
  return outcome.response.bodyPrefix === null ? null : Buffer.from(outcome.response.bodyPrefix).toString("latin1");
}

const at = (path: string) => `http://127.0.0.1:${target.port}${path}`;

describe("body prefix over HTTP/1.1", () => {
  it("reads no body unless asked (null)", async () => {
    expect(await prefix(at("/length"), undefined)).toBeNull();
    expect(await prefix(at("/length"), 0)).toBeNull();
  });

  it.each(["/length", "/chunked", "/close-delimited", "/interim-then-body"])("decodes %s framing to the same bytes", async (path) => {
    expect(await prefix(at(path), 64 * 1024)).toBe(page);
  });

  it("stops at the limit", async () => {
    expect(await prefix(at("/chunked"), 20)).toBe(page.slice(0, 20));
    expect(await prefix(at("/length"), 5)).toBe(page.slice(0, 5));
  });

  it("Transfer-Encoding overrides Content-Length; Content-Length stops where it says", async () => {
    expect(await prefix(at("/te-beats-cl"), 100)).toBe("hello");
    expect(await prefix(at("/length-shorter-than-sent"), 100)).toBe("body");
  });

  it("HEAD and 204 have no body (empty, not null)", async () => {
    expect(await prefix(at("/length"), 100, "HEAD")).toBe("");
    expect(await prefix(at("/no-content"), 100)).toBe("");
  });

  it("framing that cannot be trusted gives null, and the response still counts", async () => {
    expect(await prefix(at("/bad-chunk"), 100)).toBeNull();
    expect(await prefix(at("/conflicting-lengths"), 100)).toBeNull();
  });

  it("a framing field of 200,000 list items is read, not thrown on", async () => {
    expect(await prefix(at("/huge-coding-list"), 100)).toBe("hello");
  });

  it("an endless body is read only as far as asked", async () => {
    expect(await prefix(endless.url, 64 * 1024)).toBe("a".repeat(64 * 1024));
  });

  it("never reads more than 1 MiB, whatever it is asked for", async () => {
    expect((await prefix(endless.url, 10 * 1024 * 1024))?.length).toBe(1024 * 1024);
  });

  it("a body that stalls ends at the hop's deadline with what arrived, and the hop still answers", async () => {
    const { port } = stalled.address() as AddressInfo;
    expect(await prefix(`http://127.0.0.1:${port}/`, 64 * 1024, "GET", 300)).toBe("0123456789");
  });
});

describe("bodyPrefixReader, byte by byte", () => {
  it("decodes chunked framing fed one byte at a time", () => {
    const body = ANSWERS["/chunked"] as string;
    const bytes = Buffer.from(body.slice(body.indexOf("\r\n\r\n") + 4), "latin1");
    const reader = bodyPrefixReader(bodyFraming([["transfer-encoding", "chunked"]]), 1_000);
    let done = false;
    for (const byte of bytes) done = reader.push(Uint8Array.of(byte)) || done;
    expect(done).toBe(true);
    expect(Buffer.from(reader.result() ?? []).toString("latin1")).toBe(page);
  });

  it.each([
    [[["content-length", "5"]], { kind: "length", length: 5 }],
    [[["content-length", "5, 5"]], { kind: "length", length: 5 }],
    [
      [
        ["content-length", "5"],
        ["content-length", "6"],
      ],
      { kind: "invalid" },
    ],
    [[["content-length", "-1"]], { kind: "invalid" }],
    [[["transfer-encoding", "gzip, chunked"]], { kind: "chunked" }],
    [[["transfer-encoding", "chunked, gzip"]], { kind: "close" }],
    [[], { kind: "close" }],
    [[["content-length", "5,"]], { kind: "invalid" }],
    [[["content-length", ""]], { kind: "invalid" }],
    [[["transfer-encoding", ""]], { kind: "close" }],
  ] as const)("framing of %j", (fields, framing) => {
    expect(bodyFraming(fields)).toEqual(framing);
  });

  it("reads lists of any length in one pass (no spread of a target's list into arguments)", () => {
    const many = ",".repeat(300_000);
    expect(bodyFraming([["transfer-encoding", `${many}chunked`]])).toEqual({ kind: "chunked" });
    expect(bodyFraming([["content-length", `5${many.replaceAll(",", ",5")}`]])).toEqual({ kind: "length", length: 5 });
    expect(bodyFraming([["content-length", many]])).toEqual({ kind: "invalid" });
  });
});
