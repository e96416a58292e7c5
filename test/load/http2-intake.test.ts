import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../fixtures/until.js";
import { sampleValue } from "../fixtures/prometheus-text.js";
import { healthzMs, watchPeakRss } from "../fixtures/process-memory.js";
import { connectRawHttp2, RST_CANCEL, RST_REFUSED_STREAM } from "../fixtures/raw-http2.js";
import { type ServeProcess, startServeProcess } from "../fixtures/service-process.js";

/**
 * HTTP/2 and connection limits of a real `sitediag serve`, attacked with
 * hand-written frames: streams beyond the advertised maximum, bodies that
 * trickle, and one peer holding many connections. Settings are shortened
 * (request timeout, in-flight cap, per-peer connections) so the bounds show
 * within seconds; the defaults are the same code with other numbers.
 */
const CHECK_SITE = "/sitediag.v1.DiagnosticsService/CheckSite";
const REFLECTION = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
const MAX_INFLIGHT = 30;
const REQUEST_TIMEOUT_MS = 1_500;
const PER_PEER = 8;

let dir: string;
let service: ServeProcess;
let key: string;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sitediag-h2-intake-"));
  service = await startServeProcess(
    {
      SITEDIAG_STORE: `sqlite:${join(dir, "keys.db")}`,
      SITEDIAG_MAX_INFLIGHT: String(MAX_INFLIGHT),
      SITEDIAG_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      SITEDIAG_MAX_CONNECTIONS_PER_PEER: String(PER_PEER),
    },
    true,
  );
  key = service.firstKey ?? "";
  port = Number(new URL(service.url).port);
}, 30_000);

afterAll(async () => {
  service?.child.kill("SIGKILL");
  await service?.exited();
  rmSync(dir, { recursive: true, force: true });
});

describe("HTTP/2 limits", () => {
  it("refuses streams beyond 100 on one connection, however fast they are opened, with RSS and /healthz unharmed", async () => {
    const pid = service.child.pid ?? 0;
    const watch = watchPeakRss(pid);
    const before = watch.stop();
    const peak = watchPeakRss(pid);
    const h2 = await connectRawHttp2(port);
    // Opened without waiting for the server's SETTINGS, and never ended: each would hold a reflection stream open.
    const opened = Array.from({ length: 2_000 }, () => h2.open(REFLECTION, { "content-type": "application/grpc", te: "trailers" }));
    await until(() => (h2.resets.size + (h2.closed() ? 2_000 : 0) >= opened.length - 100 ? true : undefined), 10_000);
    const health = await healthzMs(service.url);
    // A connection closed on the flood can lose the server's SETTINGS to the reset (unread bytes are
    // dropped); whenever they were read, they announce 100.
    if (h2.maxConcurrentStreams() !== undefined || !h2.closed()) expect(h2.maxConcurrentStreams()).toBe(100);
    const refused = [...h2.resets.values()].filter((code) => code === RST_REFUSED_STREAM).length;
    // Every stream past the hundredth was refused (or the connection was closed on the flood): none is held.
    expect(refused >= opened.length - 100 || h2.closed()).toBe(true);
    expect(peak.stop() - before).toBeLessThan(64);
    expect(health).toBeLessThan(1_000);
    h2.destroy();
  });

  it("cancels a stream whose body trickles past the request timeout, and counts it against the in-flight cap meanwhile", async () => {
    const h2 = await connectRawHttp2(port);
    const headers = { "content-type": "application/json", "connect-protocol-version": "1", "x-api-key": key };
    const streams = Array.from({ length: 40 }, () => h2.open(CHECK_SITE, headers));
    const trickle = setInterval(() => {
      for (const stream of streams) h2.data(stream, Buffer.from(" "), false);
    }, 200);
    try {
      // Thirty hold a slot; ten more are refused at once with 503 unavailable, before any charge.
      await until(() => (h2.answered.size >= 10 ? true : undefined), 5_000);
      const metrics = await (await fetch(`${service.url}/metrics`)).text();
      expect(sampleValue(metrics, "sitediag_inflight_checks")).toBe(MAX_INFLIGHT);
      const overCap = await fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent("http://127.0.0.1:9/")}`, {
        headers: { "x-api-key": key },
      });
      expect(overCap.status).toBe(503);
      // Every trickling stream is cut at the request timeout, although bytes keep arriving.
      const started = performance.now();
      await until(
        () => (streams.every((stream) => h2.resets.get(stream) === RST_CANCEL || h2.answered.has(stream)) ? true : undefined),
        10_000,
      );
      expect(performance.now() - started).toBeLessThan(REQUEST_TIMEOUT_MS + 3_000);
      expect(streams.filter((stream) => h2.resets.get(stream) === RST_CANCEL)).toHaveLength(MAX_INFLIGHT);
      // And their slots are free again.
      let inflight: number | undefined;
      for (let tries = 0; tries < 100 && inflight !== 0; tries++) {
        inflight = sampleValue(await (await fetch(`${service.url}/metrics`)).text(), "sitediag_inflight_checks");
        if (inflight !== 0) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(inflight).toBe(0);
    } finally {
      clearInterval(trickle);
      h2.destroy();
    }
  });
});

describe("connections per peer", () => {
  it("closes a peer's connections beyond its share at once, while another address is still served", async () => {
    const held: Socket[] = [];
    try {
      for (let i = 0; i < PER_PEER; i++) held.push(await openSocket("127.0.0.1"));
      const extra = await openSocket("127.0.0.1");
      const closedAtOnce = await new Promise<boolean>((resolve) => {
        extra.once("close", () => resolve(true));
        setTimeout(() => resolve(false), 1_000);
      });
      expect(closedAtOnce).toBe(true);
      // Another peer address (the same machine, bound to 127.0.0.2) has its own share.
      const other = await openSocket("127.0.0.2");
      other.write("GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
      const reply = await new Promise<string>((resolve) => {
        let text = "";
        other.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
        other.once("close", () => resolve(text));
      });
      expect(reply).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});

function openSocket(localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress });
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}
