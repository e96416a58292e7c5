import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync, constants as zlib } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envelope, gzipBomb, unknownFields } from "../fixtures/grpc-frames.js";
import { rawExchange } from "../fixtures/raw-exchange.js";
import { healthzMs, watchPeakRss } from "../fixtures/process-memory.js";
import { type ServeProcess, startServeProcess } from "../fixtures/service-process.js";

/**
 * The attacks of issue 17 against a real `sitediag serve`, each bounded in
 * memory (peak RSS growth), in the port's responsiveness (/healthz during the
 * attack) and in what it gets back (the protocol's own error). Payloads are
 * bombs and floods in shape, kept small enough that the suite stays quick.
 */
const RSS_BOUND_MIB = 64;
const HEALTHZ_BOUND_MS = 1_000;
const CHECK_SITE = "/sitediag.v1.DiagnosticsService/CheckSite";
const REFLECTION = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";

let dir: string;
let service: ServeProcess;
let key: string;
let pid: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sitediag-intake-"));
  service = await startServeProcess({ SITEDIAG_STORE: `sqlite:${join(dir, "keys.db")}`, LOG_LEVEL: "info" }, true);
  key = service.firstKey ?? "";
  pid = service.child.pid ?? 0;
}, 30_000);

afterAll(async () => {
  service?.child.kill("SIGKILL");
  await service?.exited();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the attack while watching the process: peak RSS growth and /healthz latency halfway through. */
async function underAttack<T>(attack: () => Promise<T>): Promise<{ result: T; rssGrowthMiB: number; healthMs: number }> {
  const before = watchPeakRss(pid).stop();
  const watch = watchPeakRss(pid);
  const running = attack();
  const health = new Promise<number>((resolve) => setTimeout(() => resolve(healthzMs(service.url)), 50));
  const [result, healthMs] = await Promise.all([running, health]);
  return { result, rssGrowthMiB: watch.stop() - before, healthMs };
}

function expectBounded(outcome: { rssGrowthMiB: number; healthMs: number }): void {
  expect(outcome.rssGrowthMiB).toBeLessThan(RSS_BOUND_MIB);
  expect(outcome.healthMs).toBeLessThan(HEALTHZ_BOUND_MS);
  expect(service.child.exitCode).toBeNull();
}

/** gRPC-Web's status: a header on a trailers-only answer, else a line of the trailer frame at the end of the body. */
function grpcWebStatus(answer: { headers: Headers; text: string } | undefined): string | undefined {
  return answer?.headers.get("grpc-status") ?? /grpc-status: ?(\d+)/.exec(answer?.text ?? "")?.[1];
}

async function post(
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(`${service.url}${path}`, { method: "POST", headers, body });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** One unary call over h2c with the gRPC protocol; resolves with grpc-status and grpc-message from the trailers (or trailers-only head). */
function grpcCall(
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: string | undefined; message: string | undefined }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(service.url);
    session.on("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc+proto",
      te: "trailers",
      ...headers,
    });
    let status: string | undefined;
    let message: string | undefined;
    const take = (fields: http2.IncomingHttpHeaders) => {
      if (typeof fields["grpc-status"] === "string") status = fields["grpc-status"];
      if (typeof fields["grpc-message"] === "string") message = decodeURIComponent(fields["grpc-message"]);
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.on("data", () => undefined);
    stream.on("error", () => undefined);
    stream.on("close", () => {
      session.close();
      resolve({ status, message });
    });
    stream.end(body);
  });
}

describe("compression bombs are stopped at the message limit, on every protocol", () => {
  it("gRPC-Web: brotli is not offered; gzip inflating far past 64 KiB is resource_exhausted", async () => {
    const brotli = brotliCompressSync(Buffer.alloc(64 * 1024 * 1024), { params: { [zlib.BROTLI_PARAM_QUALITY]: 5 } });
    const bomb = gzipBomb(32 * 1024 * 1024);
    const headers = { "content-type": "application/grpc-web+proto", "x-grpc-web": "1", "x-api-key": key };
    const outcome = await underAttack(() =>
      Promise.all([
        post(CHECK_SITE, { ...headers, "grpc-encoding": "br" }, envelope(brotli, true)),
        ...Array.from({ length: 8 }, () => post(CHECK_SITE, { ...headers, "grpc-encoding": "gzip" }, envelope(bomb, true))),
      ]),
    );
    const [br, ...gzips] = outcome.result;
    expect(grpcWebStatus(br)).toBe("12"); // unimplemented: br is not accepted
    for (const gz of gzips) {
      expect(grpcWebStatus(gz)).toBe("8"); // resource_exhausted
      expect(decodeURIComponent(gz.text)).toMatch(/larger than configured readMaxBytes 65536 after decompression/);
    }
    expectBounded(outcome);
  });

  it("Connect unary: a brotli body is refused as unsupported, a gzip bomb is a resource_exhausted error", async () => {
    const brotli = brotliCompressSync(Buffer.alloc(256 * 1024 * 1024), { params: { [zlib.BROTLI_PARAM_QUALITY]: 5 } });
    const bomb = gzipBomb(32 * 1024 * 1024);
    const headers = { "content-type": "application/json", "x-api-key": key };
    const outcome = await underAttack(() =>
      Promise.all([
        post(CHECK_SITE, { ...headers, "content-encoding": "br" }, brotli),
        ...Array.from({ length: 8 }, () => post(CHECK_SITE, { ...headers, "content-encoding": "gzip" }, bomb)),
      ]),
    );
    const [br, ...gzips] = outcome.result;
    expect(JSON.parse(br?.text ?? "{}")).toMatchObject({ code: "unimplemented" });
    for (const gz of gzips) {
      expect(gz.status).toBe(429);
      expect(JSON.parse(gz.text)).toMatchObject({ code: "resource_exhausted" });
    }
    expectBounded(outcome);
  });

  it("gRPC over h2c: a 256 KiB compressed message is refused from its length prefix, a smaller gzip bomb while inflating", async () => {
    const wide = envelope(Buffer.alloc(256 * 1024, 7), true);
    const bomb = envelope(gzipBomb(48 * 1024 * 1024), true);
    const outcome = await underAttack(() =>
      Promise.all([
        grpcCall(CHECK_SITE, { "grpc-encoding": "gzip", "x-api-key": key }, wide),
        ...Array.from({ length: 8 }, () => grpcCall(CHECK_SITE, { "grpc-encoding": "gzip", "x-api-key": key }, bomb)),
      ]),
    );
    for (const call of outcome.result) expect(call.status).toBe("8");
    expect(outcome.result[0]?.message).toMatch(/message size 262144 is larger than configured readMaxBytes 65536/);
    for (const call of outcome.result.slice(1)) expect(call.message).toMatch(/after decompression/);
    expectBounded(outcome);
  });

  it("gRPC reflection needs no key, and gets the same limit", async () => {
    const bomb = envelope(gzipBomb(48 * 1024 * 1024), true);
    const outcome = await underAttack(() =>
      Promise.all(Array.from({ length: 8 }, () => grpcCall(REFLECTION, { "grpc-encoding": "gzip" }, bomb))),
    );
    for (const call of outcome.result) expect(call.status).toBe("8");
    expectBounded(outcome);
  });
});

describe("a call without a valid key is refused from its headers, before its body is read", () => {
  it("4 MiB of unknown protobuf fields: 401 with no key, resource_exhausted from the length with one", async () => {
    const body = unknownFields(4 * 1024 * 1024);
    const outcome = await underAttack(() =>
      Promise.all([
        post(CHECK_SITE, { "content-type": "application/proto" }, body),
        post(CHECK_SITE, { "content-type": "application/proto", "x-api-key": key }, body),
      ]),
    );
    const [anonymous, keyed] = outcome.result;
    expect(anonymous?.status).toBe(401);
    expect(JSON.parse(anonymous?.text ?? "{}")).toMatchObject({ code: "unauthenticated" });
    expect(keyed?.status).toBe(429);
    expect(JSON.parse(keyed?.text ?? "{}")).toMatchObject({ code: "resource_exhausted" });
    expectBounded(outcome);
  });

  it("eight 50 MB JSON bodies with no key: answered 401 while the bodies are still being sent, and the connections closed", async () => {
    const outcome = await underAttack(() => Promise.all(Array.from({ length: 8 }, () => streamHugeBody(50 * 1024 * 1024))));
    for (const sent of outcome.result) {
      expect(sent.reply).toMatch(/^HTTP\/1\.1 401 /);
      // The server answered and closed long before the body was through: it did not wait for it.
      expect(sent.bytesWritten).toBeLessThan(16 * 1024 * 1024);
    }
    expectBounded(outcome);
  });

  it("no key, or a well-formed key the store does not know: answered before a single byte of the declared body is sent", async () => {
    const unknown = "sd_0000000000000000000000" + "000000";
    for (const keyHeader of ["", `x-api-key: ${unknown}\r\n`]) {
      const head = `POST ${CHECK_SITE} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/proto\r\ncontent-length: 4194304\r\n${keyHeader}\r\n`;
      // The body is never sent: a server that waited for it would answer only when the 2 s are over, with nothing.
      const reply = await rawExchange(Number(new URL(service.url).port), head, 2_000);
      expect(reply.bytes.toString("latin1")).toMatch(/^HTTP\/1\.1 401 /);
    }
  });
});

describe("bad credentials and secrets", () => {
  it("an api_key with characters beyond Latin-1 or outside the key alphabet is a 401 with the usual message, never a 500", async () => {
    const target = encodeURIComponent("http://127.0.0.1:9/");
    for (const presented of [`${key}\u201d`, "\u{1F511}", "sd_\u00e9\u00e9", "x".repeat(5_000), "", "sd_ abc", `${key}${key}`]) {
      const response = await fetch(`${service.url}/api/v1/is-site-down?url=${target}&api_key=${encodeURIComponent(presented)}`);
      expect(response.status, presented).toBe(401);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/a valid API key is required/);
    }
    const errorLines = service
      .stdout()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
    expect(errorLines).toEqual([]);
  });

  it("no spelling of credentials in the url parameter reaches the log", async () => {
    const spellings = [
      "https://admin:pw-secret-1@127.0.0.1:9/",
      "//admin:pw-secret-2@127.0.0.1:9/",
      " https://admin:pw-secret-3@127.0.0.1:9/",
      "http:admin:pw-secret-4@127.0.0.1:9/",
      "http:\\\\admin:pw-secret-5@127.0.0.1:9/",
      "admin:pw-secret-6@127.0.0.1:9/",
      "http://admin:pw-secret-7@127.0.0.1:99999/",
    ];
    for (const url of spellings) {
      await (
        await fetch(`${service.url}/api/v1/redirect-check?url=${encodeURIComponent(url)}`, { headers: { "x-api-key": key } })
      ).arrayBuffer();
    }
    // The log line of the last request is written when its response closes: wait for it.
    const deadline = Date.now() + 5_000;
    while (!service.stdout().includes("99999") && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(service.stdout()).toContain("/api/v1/redirect-check");
    expect(service.stdout()).not.toMatch(/pw-secret/);
  });

  it("the first key went to stderr for the person, never into the JSON log on stdout", () => {
    expect(service.stderr()).toContain(key);
    expect(service.stderr()).toMatch(/More keys, in this same store: SITEDIAG_STORE=.+ keys create/);
    expect(service.stdout()).not.toContain(key);
  });
});

/**
 * Streams a JSON body of `bytes` to CheckSite with no key, on a raw socket,
 * until the server closes the connection (or 10 s pass); gives what the
 * server answered and how much of the body got written.
 */
async function streamHugeBody(bytes: number): Promise<{ reply: string; bytesWritten: number }> {
  const socket = connect({ host: "127.0.0.1", port: Number(new URL(service.url).port) });
  let reply = "";
  socket.on("data", (chunk: Buffer) => (reply += chunk.toString("latin1")));
  socket.on("error", () => undefined);
  const closed = new Promise((resolve) => socket.once("close", resolve));
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.write(`POST ${CHECK_SITE} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${bytes}\r\n\r\n`);
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const deadline = Date.now() + 10_000;
  let written = 0;
  while (!socket.destroyed && written < bytes && Date.now() < deadline) {
    written += chunk.length;
    if (!socket.write(chunk)) await Promise.race([new Promise((resolve) => socket.once("drain", resolve)), closed]);
  }
  socket.end();
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2_000))]);
  socket.destroy();
  return { reply, bytesWritten: written };
}
