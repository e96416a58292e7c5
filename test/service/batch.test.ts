import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";

/**
 * CheckSites and TraceRedirectsBatch through the real service (admission,
 * access, the diagnostics) on every RPC door: completion order, a hanging
 * item that holds nothing back, cancellation, the up-front charge.
 */
let targets: HttpTargets;
let service: ServeTestService;

beforeAll(async () => {
  targets = await startHttpTargets({
    routes: {
      "/fast": { kind: "respond", status: 200 },
      "/slow": { kind: "respond", status: 200, delayMs: 600 },
      "/hang": { kind: "hang" },
      "/old": { kind: "redirect", status: 301, location: "/new" },
      "/temp": { kind: "redirect", status: 302, location: "/new" },
      "/new": { kind: "respond", status: 200 },
    },
  });
  service = await startTestService({
    as: "serve",
    config: { siteTimeoutMs: 2_000, traceHopTimeoutMs: 2_000, tracePorts: [targets.httpPort] },
  });
}, 30_000);

afterAll(async () => {
  await service?.close();
  await targets?.close();
});

const doors: readonly (readonly [string, () => Transport])[] = [
  ["Connect over HTTP/1.1", () => createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" })],
  ["Connect over h2c", () => createConnectTransport({ baseUrl: service.url, httpVersion: "2" })],
  ["gRPC", () => createGrpcTransport({ baseUrl: service.url })],
  ["gRPC-Web", () => createGrpcWebTransport({ baseUrl: service.url, httpVersion: "1.1" })],
];

const policy = () => ({ budget: service.config.creditBudget, windowSeconds: service.config.creditWindowSeconds });

describe.each(doors)("CheckSites on %s", (_door, transport) => {
  it("streams results in completion order with their indexes; a hanging item holds back nothing; an invalid URL is an item error", async () => {
    const client = createClient(DiagnosticsService, transport());
    const before = (await service.store.usage(service.keyId, policy())).used;
    const urls = [targets.url("/hang"), targets.url("/slow"), "not a url", targets.url("/fast")];
    const seen: { index: number; at: number; status?: string; error?: string }[] = [];
    const started = performance.now();
    let header = new Headers();
    for await (const item of client.checkSites({ urls }, { headers: { "x-api-key": service.key }, onHeader: (h) => (header = h) })) {
      seen.push({
        index: item.index,
        at: performance.now() - started,
        ...(item.outcome.case === "result" ? { status: item.outcome.value.status === 1 ? "up" : "down" } : {}),
        ...(item.outcome.case === "error" ? { error: item.outcome.value.code } : {}),
      });
      expect(item.url).toBe(urls[item.index]);
    }
    expect(seen.map((item) => item.index)).toEqual([2, 3, 1, 0]);
    expect(seen[0]).toMatchObject({ index: 2, error: "invalid_argument" });
    expect(seen[1]).toMatchObject({ index: 3, status: "up" });
    expect(seen[2]).toMatchObject({ index: 1, status: "up" });
    // The hanging one ends at its own timeout, long after the others were delivered.
    expect(seen[3]).toMatchObject({ index: 0, status: "down" });
    expect(seen[2]?.at ?? Infinity).toBeLessThan(seen[3]?.at ?? 0);
    expect((await service.store.usage(service.keyId, policy())).used - before).toBe(8);
    expect(header.get("x-ratelimit-limit")).toBe(String(service.config.creditBudget));
  });
});

describe("TraceRedirectsBatch", () => {
  it("judges each expectation and streams every item, through gRPC", async () => {
    const client = createClient(DiagnosticsService, createGrpcTransport({ baseUrl: service.url }));
    const items = [
      { url: targets.url("/old"), expectedFinalUrl: targets.url("/new") },
      { url: targets.url("/temp"), expectedFinalUrl: targets.url("/new") },
      { url: targets.url("/old"), expectedFinalUrl: targets.url("/elsewhere") },
      { url: targets.url("/fast") },
    ];
    const byIndex = new Map<number, { matches?: boolean; reason?: string; chain: string | undefined }>();
    for await (const item of client.traceRedirectsBatch({ items }, { headers: { "x-api-key": service.key } })) {
      byIndex.set(item.index, {
        ...(item.expectation === undefined ? {} : { matches: item.expectation.matches }),
        ...(item.expectation?.reason === undefined ? {} : { reason: item.expectation.reason }),
        chain: item.outcome.case === "result" ? String(item.outcome.value.chainStatus) : undefined,
      });
    }
    expect(byIndex.size).toBe(4);
    expect(byIndex.get(0)).toMatchObject({ matches: true });
    expect(byIndex.get(1)?.reason).toMatch(/temporary redirect/);
    expect(byIndex.get(2)?.reason).toMatch(/ends at .*\/new, not at .*\/elsewhere/);
    expect(byIndex.get(3)?.matches).toBeUndefined();
  });
});

describe("the up-front charge", () => {
  it("refuses a batch the key cannot afford with resource_exhausted, and runs none of it", async () => {
    const key = await newBudgetedKey(12);
    const client = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    expect(
      await drain(client.checkSites({ urls: [targets.url("/fast"), targets.url("/fast")] }, { headers: { "x-api-key": key.secret } })),
    ).toBeUndefined();
    const seenBefore = targets.requests.length;
    const error = await drain(
      client.checkSites({ urls: [1, 2, 3, 4, 5].map((n) => targets.url(`/fast?n=${n}`)) }, { headers: { "x-api-key": key.secret } }),
    );
    expect(error?.code).toBe(Code.ResourceExhausted);
    expect(error?.message).toMatch(/costs 10 credits but 8 of 12 are left/);
    expect(targets.requests.length).toBe(seenBefore);
    expect((await service.store.usage(key.id, policy())).used).toBe(4);
  });

  it("charges racing batches of one key exactly: only what the budget covers runs", async () => {
    const key = await newBudgetedKey(20);
    const client = createClient(DiagnosticsService, createGrpcTransport({ baseUrl: service.url }));
    // Six batches of 2 URLs (4 credits each) race for 20 credits: exactly five are admitted.
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, () =>
        drain(client.checkSites({ urls: [targets.url("/fast"), targets.url("/fast")] }, { headers: { "x-api-key": key.secret } })),
      ),
    );
    expect(outcomes.filter((error) => error === undefined)).toHaveLength(5);
    expect(outcomes.filter((error) => error?.code === Code.ResourceExhausted)).toHaveLength(1);
    expect((await service.store.usage(key.id, policy())).used).toBe(20);
  });

  it("refuses 101 items as invalid_argument before charging anything", async () => {
    const client = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    const before = (await service.store.usage(service.keyId, policy())).used;
    const error = await drain(
      client.checkSites({ urls: Array.from({ length: 101 }, () => targets.url("/fast")) }, { headers: { "x-api-key": service.key } }),
    );
    expect(error?.code).toBe(Code.InvalidArgument);
    expect(error?.message).toMatch(/at most 100 items, this one has 101/);
    expect((await service.store.usage(service.keyId, policy())).used).toBe(before);
  });
});

describe("the in-flight cap", () => {
  it("counts a running batch as the eight checks it may run at once", async () => {
    const client = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    const running = drain(
      client.checkSites(
        { urls: [targets.url("/slow?weight=1"), targets.url("/slow?weight=2")] },
        { headers: { "x-api-key": service.key } },
      ),
    );
    const deadline = Date.now() + 5_000;
    while (!targets.requests.some((request) => request.target.includes("weight=")) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(/^sitediag_inflight_checks (\d+)$/m.exec(metrics)?.[1]).toBe("8");
    expect(await running).toBeUndefined();
  });
});

describe("cancelling a batch", () => {
  it("stops the items still to run: no new probe starts after the caller goes", async () => {
    const client = createClient(DiagnosticsService, createGrpcTransport({ baseUrl: service.url }));
    const urls = Array.from({ length: 40 }, (_, i) => targets.url(`/slow?cancel=${i}`));
    const probes = () => targets.requests.filter((request) => request.target.includes("cancel=")).length;
    const controller = new AbortController();
    const stream = client.checkSites({ urls }, { headers: { "x-api-key": service.key }, signal: controller.signal });
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    controller.abort();
    await iterator.return?.();
    const atCancel = probes();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // At most the eight running when the first answered, and the eight started as slots freed before the abort arrived.
    expect(probes()).toBeLessThanOrEqual(atCancel + 8);
    expect(probes()).toBeLessThan(24);
  });
});

async function newBudgetedKey(budget: number): Promise<{ secret: string; id: string }> {
  const { issueKey } = await import("../../src/access/issue-key.js");
  const issued = await issueKey(service.store, `budget ${budget}`, { budget });
  if (issued === undefined) throw new Error("no key");
  return { secret: issued.secret, id: issued.record.id };
}

/** Reads a stream to its end; the ConnectError that ended it, if one did. */
async function drain(stream: AsyncIterable<unknown>): Promise<ConnectError | undefined> {
  try {
    for await (const item of stream) void item;
    return undefined;
  } catch (error) {
    return ConnectError.from(error);
  }
}
