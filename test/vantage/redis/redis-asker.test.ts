import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { sharedClockMs } from "../../../src/probe/clock.js";
import type { DiagnosticRunner } from "../../../src/runner/diagnostic-runner.js";
import { diagnosticRunnerFromConfig } from "../../../src/runner/runner-from-config.js";
import { redisAskerFromConfig } from "../../../src/vantage/fanout-from-config.js";
import { createRedisFanout, type RedisFanout } from "../../../src/vantage/redis/redis-fanout.js";
import { vantageKeys, WORKER_GROUP } from "../../../src/vantage/redis/vantage-keys.js";
import { type HttpTargets, startHttpTargets } from "../../fixtures/http-targets.js";
import { type RedisServerFixture, redisAvailability, startRedisServer } from "../../../testkit/redis-server.js";
import { type RedisClusterFixture, startRedisCluster } from "../../fixtures/redis-cluster.js";
import { collect } from "../../fixtures/vantage-rig.js";

// The command line's engine on a Redis store: an asker of the deployment's
// vantages that is none of their workers, even when its configuration names
// the vantage of a worker, and that takes its reply stream with it.
const availability = redisAvailability();
const FAST = { beatMs: 200, expiryMs: 1_000, claimIdleMs: 600, blockMs: 1_000, replyTtlMs: 10_000 };
const keys = vantageKeys("sitediag:");

describe.skipIf(!availability.available)("the command line's asker over Redis", () => {
  let redis: RedisServerFixture;
  let admin: Redis;
  let targets: HttpTargets;
  let runner: DiagnosticRunner;
  let worker: RedisFanout;

  beforeAll(async () => {
    redis = await startRedisServer();
    admin = new Redis(redis.url());
    targets = await startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 } } });
    runner = diagnosticRunnerFromConfig(
      loadConfig({ SITEDIAG_PROBE_THREADS: "0", SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8", SITEDIAG_HOSTS_FILE: "/dev/null" }),
      undefined,
    );
    worker = await createRedisFanout({
      location: { kind: "redis", url: redis.url() },
      self: { name: "eu-west", label: "Frankfurt" },
      runner,
      maxJobs: 2,
      timing: FAST,
    });
  }, 60_000);

  afterAll(async () => {
    await worker?.close();
    await runner?.close();
    await targets?.close();
    admin?.disconnect();
    await redis?.close();
  });

  it("is undefined on the SQLite store, where the command line keeps its one local vantage", async () => {
    expect(await redisAskerFromConfig(loadConfig({ SITEDIAG_STORE: "sqlite::memory:" }), () => undefined)).toBeUndefined();
  });

  it("named after a worker's vantage, it asks that vantage but takes none of its jobs, beats no heartbeat, and leaves no reply stream", async () => {
    const troubles: unknown[] = [];
    const asker = await redisAskerFromConfig(loadConfig({ SITEDIAG_STORE: redis.url(), SITEDIAG_VANTAGE: "eu-west" }), (error) =>
      troubles.push(error),
    );
    if (asker === undefined) throw new Error("no asker on a Redis store");
    const heartbeats = await admin.zrange(keys.seen, 0, -1);
    expect(heartbeats).toHaveLength(1);
    // Alive through the worker's heartbeat: the worker's label, not the asker's bare name.
    expect(await asker.alive()).toEqual([{ name: "eu-west", label: "Frankfurt", location: undefined }]);
    const job = { kind: "site-check", raw: targets.url("/ok"), options: {} } as const;
    const runs = await Promise.all([1, 2, 3, 4].map(() => collect(asker, job, ["eu-west"], sharedClockMs() + 10_000)));
    for (const entries of runs)
      expect(entries).toMatchObject([{ state: "answered", outcome: { kind: "result", result: { status: "up", statusCode: 200 } } }]);
    // Every job went to the worker, the group's one consumer, named by its heartbeat.
    const [, , , workerId] = JSON.parse(heartbeats[0] ?? "[]") as unknown[];
    const consumers = (await admin.call("XINFO", "CONSUMERS", keys.jobs("eu-west"), WORKER_GROUP)) as unknown[][];
    expect(consumers.map((row) => row[1])).toEqual([workerId]);
    expect(await admin.zrange(keys.seen, 0, -1)).toEqual(heartbeats);
    expect(await admin.keys("{sitediag:d:*}:replies")).toHaveLength(1);
    await asker.close();
    expect(await admin.keys("{sitediag:d:*")).toEqual([]);
    expect(troubles).toEqual([]);
  }, 30_000);
});

describe.skipIf(!availability.available)("the command line's asker on a Redis Cluster (redis+cluster://)", () => {
  let cluster: RedisClusterFixture;
  let targets: HttpTargets;
  let runner: DiagnosticRunner;
  let worker: RedisFanout;

  beforeAll(async () => {
    [cluster, targets] = await Promise.all([
      startRedisCluster(),
      startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 } } }),
    ]);
    runner = diagnosticRunnerFromConfig(
      loadConfig({ SITEDIAG_PROBE_THREADS: "0", SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8", SITEDIAG_HOSTS_FILE: "/dev/null" }),
      undefined,
    );
    worker = await createRedisFanout({
      location: { kind: "redis-cluster", nodes: cluster.nodes, password: undefined },
      self: { name: "eu-west" },
      runner,
      maxJobs: 2,
      timing: FAST,
    });
  }, 90_000);

  afterAll(async () => {
    await worker?.close();
    await runner?.close();
    await targets?.close();
    await cluster?.close();
  });

  it("asks the worker's vantage through the seeds SITEDIAG_STORE names, and its reply stream is gone after it", async () => {
    const asker = await redisAskerFromConfig(
      loadConfig({ SITEDIAG_STORE: `redis+cluster://${cluster.seeds}`, SITEDIAG_VANTAGE: "eu-west" }),
      () => undefined,
    );
    if (asker === undefined) throw new Error("no asker on a Redis Cluster store");
    const entries = await collect(
      asker,
      { kind: "site-check", raw: targets.url("/ok"), options: {} },
      ["eu-west"],
      sharedClockMs() + 10_000,
    );
    expect(entries).toMatchObject([{ state: "answered", outcome: { kind: "result", result: { status: "up" } } }]);
    const admin = new Cluster(cluster.nodes.map(({ host, port }) => ({ host, port })));
    try {
      // The worker's heartbeat only.
      expect(await admin.zcard(keys.seen)).toBe(1);
    } finally {
      admin.disconnect();
    }
    expect([...(await cluster.keysByMaster("{sitediag:d:*")).values()].flat()).toHaveLength(1);
    await asker.close();
    expect([...(await cluster.keysByMaster("{sitediag:d:*")).values()].flat()).toEqual([]);
  }, 30_000);
});
