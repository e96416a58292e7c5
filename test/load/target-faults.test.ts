import { once } from "node:events";
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { bounded } from "../fixtures/bounded-calls.js";

const CHECKS = 200;
const CONCURRENCY = 50;
const TIMEOUT_MS = 800;

interface SiteData {
  status: string;
  failedStage: string | null;
  statusCode: number | null;
}

/**
 * A target that misbehaves below HTTP in ways the raw-target fixture has no
 * step for: it writes `prefix` and then resets the connection (RST), or, with
 * `prefix` null, accepts and never reads a byte.
 */
async function startBrokenTarget(prefix: string | null): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    if (prefix === null) return void socket.pause();
    socket.once("data", () => socket.write(prefix, () => socket.resetAndDestroy()));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    connections: () => connections,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("target faults under load", () => {
  let dns: DnsServer;
  let targets: HttpTargets;
  let service: TestService;
  const agent = new Agent({ connections: CONCURRENCY });

  beforeAll(async () => {
    dns = await startDnsServer();
    targets = await startHttpTargets({ routes: { "/up": { kind: "respond", status: 200 } } });
    service = await startTestService({ config: { siteTimeoutMs: TIMEOUT_MS, dnsServers: [dns.server] } });
  });
  afterAll(async () => {
    await agent.close();
    await service?.close();
    await targets?.close();
    await dns?.close();
  });

  async function check(url: string): Promise<{ status: number; data: SiteData; elapsedMs: number }> {
    const started = Date.now();
    const response = await request(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(url)}`, { dispatcher: agent });
    const body = (await response.body.json()) as { data: SiteData };
    return { status: response.statusCode, data: body.data, elapsedMs: Date.now() - started };
  }

  async function stillServes(): Promise<void> {
    const healthy = await check(targets.url("/up"));
    expect(healthy.data).toMatchObject({ status: "up", statusCode: 200 });
  }

  it("reports a reset in the middle of the response head as down at the http stage, every time", async () => {
    const target = await startBrokenTarget("HTTP/1.1 200 OK\r\ncontent-le");
    try {
      const results = await bounded(CHECKS, CONCURRENCY, 30_000, () => check(target.url));
      expect(
        results.filter((result) => result.status !== 200 || result.data.status !== "down" || result.data.failedStage !== "http"),
      ).toEqual([]);
      expect(target.connections()).toBe(CHECKS);
    } finally {
      await target.close();
    }
    await stillServes();
  });

  it("answers every check when the target resets in the middle of the body", async () => {
    const target = await startBrokenTarget("HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\npartial body");
    try {
      const results = await bounded(CHECKS, CONCURRENCY, 30_000, () => check(target.url));
      // The head arrived whole, so "up 200" is a fair reading; "down" at the http stage is too. Nothing else is.
      const fair = (data: SiteData) =>
        (data.status === "up" && data.statusCode === 200) || (data.status === "down" && data.failedStage === "http");
      expect(results.filter((result) => result.status !== 200 || !fair(result.data))).toEqual([]);
    } finally {
      await target.close();
    }
    await stillServes();
  });

  it("times out every check on a target that accepts and never reads, within the timeout", async () => {
    const target = await startBrokenTarget(null);
    try {
      const results = await bounded(CHECKS, CONCURRENCY, 30_000, () => check(target.url));
      expect(
        results.filter((result) => result.status !== 200 || result.data.status !== "down" || result.data.failedStage !== "http"),
      ).toEqual([]);
      // Generous: the timeout plus scheduling under load, never the test's own limit.
      expect(Math.max(...results.map((result) => result.elapsedMs))).toBeLessThan(TIMEOUT_MS + 2_000);
    } finally {
      await target.close();
    }
    await stillServes();
  });

  it("reports down at the dns stage once the DNS server stops answering", async () => {
    dns.answer("site.test", { a: ["127.0.0.1"] }, "never");
    const url = `http://site.test:${targets.httpPort}/up`;
    const first = await check(url);
    expect(first.data).toMatchObject({ status: "up", statusCode: 200 });
    const results = await bounded(CHECKS, CONCURRENCY, 30_000, () => check(url));
    expect(results.filter((result) => result.status !== 200 || result.data.status !== "down" || result.data.failedStage !== "dns")).toEqual(
      [],
    );
    expect(Math.max(...results.map((result) => result.elapsedMs))).toBeLessThan(TIMEOUT_MS + 2_000);
    await stillServes();
  });
});
