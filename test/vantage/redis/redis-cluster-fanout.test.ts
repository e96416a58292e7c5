import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { sharedClockMs } from "../../../src/probe/clock.js";
import type { DiagnosticRunner } from "../../../src/runner/diagnostic-runner.js";
import { diagnosticRunnerFromConfig } from "../../../src/runner/runner-from-config.js";
import { createRedisFanout, type RedisFanout } from "../../../src/vantage/redis/redis-fanout.js";
import { vantageKeys } from "../../../src/vantage/redis/vantage-keys.js";
import { type HttpTargets, startHttpTargets } from "../../fixtures/http-targets.js";
import { type RedisClusterFixture, startRedisCluster } from "../../fixtures/redis-cluster.js";
import { redisAvailability } from "../../../testkit/redis-server.js";
import { collect, eventually } from "../../fixtures/vantage-rig.js";

// The engine on a real Redis Cluster (three masters with a replica each):
// its keys spread over the masters by their hash tags, and a failover of the
// master holding a vantage's stream while fan-outs are in flight loses no
// entry silently and duplicates none: each run still yields exactly one entry
// per vantage, answered or `unavailable`.
const availability = redisAvailability();
const VANTAGES = ["eu-west", "us-east", "ap-south"];
const FAST = { beatMs: 200, expiryMs: 2_000, claimIdleMs: 600, blockMs: 1_000, replyTtlMs: 10_000 };

describe.skipIf(!availability.available)("the Redis fan-out on a Redis Cluster", () => {
  let cluster: RedisClusterFixture;
  let targets: HttpTargets;
  const runners: DiagnosticRunner[] = [];
  const workers: RedisFanout[] = [];
  let dispatcher: RedisFanout;

  beforeAll(async () => {
    [cluster, targets] = await Promise.all([
      startRedisCluster(),
      startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 } } }),
    ]);
    const location = { kind: "redis-cluster", nodes: cluster.nodes, password: undefined } as const;
    for (const name of VANTAGES) {
      const runner = diagnosticRunnerFromConfig(
        loadConfig({ SITEDIAG_PROBE_THREADS: "0", SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8", SITEDIAG_HOSTS_FILE: "/dev/null" }),
        undefined,
      );
      runners.push(runner);
      workers.push(await createRedisFanout({ location, self: { name }, runner, maxJobs: 16, timing: FAST }));
    }
    dispatcher = await createRedisFanout({ location, self: { name: "tester" }, maxJobs: 1, timing: FAST });
  }, 90_000);

  afterAll(async () => {
    await dispatcher?.close();
    for (const worker of workers) await worker.close();
    for (const runner of runners) await runner.close();
    await targets?.close();
    await cluster?.close();
  });

  const runOnce = () =>
    collect(dispatcher, { kind: "site-check", raw: targets.url("/ok"), options: {} }, VANTAGES, sharedClockMs() + 8_000);

  it("answers from every vantage, its streams spread over more than one master", async () => {
    const entries = await runOnce();
    expect(entries.map((entry) => entry.state)).toEqual(["answered", "answered", "answered"]);
    const streams = await cluster.keysByMaster("{sitediag:v:*}:jobs");
    expect([...streams.values()].filter((keys) => keys.length > 0).length).toBeGreaterThan(1);
  });

  it("a failover of the master holding a vantage's stream during fan-outs: every run still has exactly one entry per vantage, and service resumes", async () => {
    let failedOver = false;
    const runs: Promise<Awaited<ReturnType<typeof runOnce>>>[] = [];
    const failover = cluster.failoverFor(vantageKeys("sitediag:").jobs("eu-west")).finally(() => (failedOver = true));
    // Fan-outs start before, during and just after the failover.
    while (!failedOver || runs.length < 40) {
      runs.push(runOnce());
      await new Promise((resolve) => setTimeout(resolve, 25));
      if (runs.length > 2_000) break;
    }
    const moved = await failover;
    expect(moved.to).not.toBe(moved.from);
    const results = await Promise.all(runs);
    let answered = 0;
    for (const entries of results) {
      expect(entries.map((entry) => entry.vantage.name).sort()).toEqual([...VANTAGES].sort());
      for (const entry of entries) expect(["answered", "unavailable"]).toContain(entry.state);
      answered += entries.filter((entry) => entry.state === "answered").length;
    }
    expect(answered).toBeGreaterThan(0);
    // After the failover every vantage answers again, the moved stream's included.
    await eventually(async () => ((await runOnce()).every((entry) => entry.state === "answered") ? true : undefined), 30_000);
  }, 90_000);
});
