import { create } from "@bufbuild/protobuf";
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CheckSiteRequestSchema, DiagnosticsService, TraceRedirectsRequestSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { createAccessInterceptor } from "../../src/access/access-interceptor.js";
import { priceOf } from "../../src/access/call-price.js";
import type { AccessStore } from "../../src/access/store.js";
import { USAGE_HEADER_NAMES } from "../../src/access/usage-headers.js";
import { loadConfig } from "../../src/config.js";
import { type RunningServer, startServer } from "../../src/server/start-server.js";
import { createLocalFanout, LOCAL_VANTAGE } from "../../src/vantage/local-fanout.js";
import { createVantagePlanner } from "../../src/service/vantage-plan.js";
import { redisAvailability, startRedisServer, type RedisServerFixture } from "../../testkit/redis-server.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type RedisClusterFixture, startRedisCluster } from "../fixtures/redis-cluster.js";
import { createTestEnv, runnerOf, type TestEnv } from "../fixtures/test-env.js";
import {
  newKey,
  redisClusterStoreUnderTest,
  redisStoreUnderTest,
  sqliteStoreUnderTest,
  type StoreUnderTest,
} from "../fixtures/store-harness.js";

// A call from several vantages is charged up front for every vantage named,
// in one atomic charge, and each vantage that ends unavailable is given back
// exactly once, when the call is over. Raced here on each store as the
// batch charges are, through the real access layer of two instances.

describe("the price of a call from several vantages", () => {
  it("is the unit cost per vantage named; all must be resolved first; a list that is not one has no price", () => {
    const site = (vantages: string[]) => create(CheckSiteRequestSchema, { url: "https://a.test/", vantages });
    const trace = (vantages: string[]) => create(TraceRedirectsRequestSchema, { url: "a.test", vantages });
    expect(priceOf(DiagnosticsService.method.checkSite.name, site([]))).toEqual({ kind: "credits", credits: 2, units: 1 });
    expect(priceOf(DiagnosticsService.method.checkSite.name, site(["eu-west,us-east", "ap-south"]))).toEqual({
      kind: "credits",
      credits: 6,
      units: 3,
    });
    expect(priceOf(DiagnosticsService.method.traceRedirects.name, trace(["eu-west", "eu-west", "us-east"]))).toEqual({
      kind: "credits",
      credits: 10,
      units: 2,
    });
    expect(priceOf(DiagnosticsService.method.checkSite.name, site(["all"]))).toBeUndefined();
    expect(priceOf(DiagnosticsService.method.checkSite.name, site(["EU"]))).toMatchObject({
      kind: "unpriced",
      reason: expect.stringMatching(/^vantages must be/) as string,
    });
  });
});

const redis = redisAvailability();
let redisServer: RedisServerFixture | undefined;
let cluster: RedisClusterFixture | undefined;
let targets: HttpTargets;
let env: TestEnv;

beforeAll(async () => {
  targets = await startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 } } });
  env = createTestEnv();
  if (redis.available) [redisServer, cluster] = await Promise.all([startRedisServer(), startRedisCluster()]);
}, 90_000);

afterAll(async () => {
  await Promise.all([redisServer?.close(), cluster?.close(), env?.close(), targets?.close()]);
});

const kinds = [
  { kind: "sqlite", skip: false, open: () => sqliteStoreUnderTest() },
  { kind: "redis", skip: !redis.available, open: () => redisStoreUnderTest(redisServer as RedisServerFixture) },
  { kind: "redis-cluster", skip: !redis.available, open: () => redisClusterStoreUnderTest(cluster as RedisClusterFixture) },
] as const;

/** An instance as `serve` composes the charge: the vantage planner, then the access layer, on `store`; its one vantage is `local`. */
async function instance(store: AccessStore, budget: number): Promise<RunningServer> {
  const config = { ...loadConfig({}), host: "127.0.0.1", port: 0, creditBudget: budget, creditWindowSeconds: 86_400 };
  const runner = runnerOf(env);
  const fanout = createLocalFanout({ info: LOCAL_VANTAGE, runner });
  return startServer({
    config,
    runner,
    vantages: { fanout },
    interceptors: [createVantagePlanner(fanout), createAccessInterceptor({ store, config })],
    exposeHeaders: USAGE_HEADER_NAMES,
    shutdownGraceMs: 1_000,
  });
}

describe.each(kinds)("calls from several vantages racing one key on $kind", ({ skip, open }) => {
  let harness: StoreUnderTest | undefined;
  const servers: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
    await harness?.cleanup();
  });

  it.skipIf(skip)("are each charged whole or not at all, and keep exactly the price of the vantages that answered", async () => {
    harness = open();
    const [storeOne, storeTwo] = [await harness.open(), await harness.open()];
    const key = await newKey(storeOne);
    const budget = 30;
    servers.push(await instance(storeOne, budget), await instance(storeTwo, budget));
    // Each call names local (answers) and ap-south (no live instance): charged 4 up front, 2 given back at its end.
    const query = new URLSearchParams({ url: targets.url("/ok"), vantages: "local,ap-south" }).toString();
    const statuses = await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const response = await fetch(`${servers[i % 2]?.url ?? ""}/api/v1/is-site-down?${query}`, { headers: { "x-api-key": key.secret } });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    const admitted = statuses.filter((status) => status === 200).length;
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    // Charged 4 each up front, so at least 7 fit; the refunds may make room for more, never past 2 each.
    expect(admitted).toBeGreaterThanOrEqual(Math.floor(budget / 4));
    expect(admitted).toBeLessThanOrEqual(budget / 2);
    // Every admitted call kept the price of one vantage: its unavailable one was refunded, once.
    expect((await storeOne.usage(key.record.id, { budget, windowSeconds: 86_400 })).used).toBe(admitted * 2);
  });
  it.skipIf(skip)(
    "a stream's trailers say what the key has left after its refund, under its head's names, on Connect, gRPC and gRPC-Web",
    async () => {
      harness = open();
      const store = await harness.open();
      const key = await newKey(store);
      const budget = 100;
      const policy = { budget, windowSeconds: 86_400 };
      const server = await instance(store, budget);
      servers.push(server);
      const transports: ReadonlyArray<readonly [string, Transport]> = [
        ["connect", createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" })],
        ["grpc", createGrpcTransport({ baseUrl: server.url })],
        ["grpc-web", createGrpcWebTransport({ baseUrl: server.url, httpVersion: "1.1" })],
      ];
      for (const [protocol, transport] of transports) {
        const client = createClient(DiagnosticsService, transport);
        const before = (await store.usage(key.record.id, policy)).remaining;
        let head = new Headers();
        let trailer = new Headers();
        const options = {
          headers: { "x-api-key": key.secret },
          onHeader: (h: Headers) => void (head = h),
          onTrailer: (t: Headers) => void (trailer = t),
        };
        const verdicts: number[] = [];
        const askedAt = performance.now();
        // local answers, ap-south has no live instance: 4 charged when the stream opens, 2 given back at its end.
        for await (const message of client.vantageCheckSite({ url: targets.url("/ok"), vantages: ["local", "ap-south"] }, options))
          if (message.verdict !== undefined) verdicts.push(message.verdict);
        expect(verdicts, protocol).toHaveLength(1);
        const after = await store.usage(key.record.id, policy);
        const readAt = performance.now();
        expect(after.remaining, protocol).toBe(before - 2);
        expect(head.get("x-ratelimit-remaining"), protocol).toBe(String(before - 4));
        expect(trailer.get("x-ratelimit-remaining"), protocol).toBe(String(after.remaining));
        expect(trailer.get("x-ratelimit-used"), protocol).toBe(String(after.used));
        // The seconds to the reset count down: the service wrote them before this test read the store, and every
        // second boundary between the two (one or more on a busy machine, measured here) takes one off.
        const [, left, reset] = /^"credits";r=(\d+);t=(\d+)$/.exec(trailer.get("ratelimit") ?? "") ?? [];
        expect(Number(left), protocol).toBe(after.remaining);
        expect(Number(reset), protocol).toBeGreaterThanOrEqual(after.resetSeconds);
        expect(Number(reset), protocol).toBeLessThanOrEqual(after.resetSeconds + Math.ceil((readAt - askedAt) / 1_000));
        expect(trailer.get("x-ratelimit-limit"), protocol).toBe(String(budget));
      }
    },
  );
});
