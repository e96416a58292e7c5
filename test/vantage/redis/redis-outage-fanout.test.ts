import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { sharedClockMs } from "../../../src/probe/clock.js";
import type { DiagnosticRunner } from "../../../src/runner/diagnostic-runner.js";
import { diagnosticRunnerFromConfig } from "../../../src/runner/runner-from-config.js";
import { createRedisFanout, type RedisFanout } from "../../../src/vantage/redis/redis-fanout.js";
import { type HttpTargets, startHttpTargets } from "../../fixtures/http-targets.js";
import { type RedisServerFixture, redisAvailability, startRedisServer } from "../../../testkit/redis-server.js";
import { collect, eventually } from "../../fixtures/vantage-rig.js";

// Redis goes away and comes back: a fan-out meanwhile ends `unavailable`
// (never hangs past its deadline, never throws), the worker is not ready, and
// the blocking loops of both sides resume by themselves.
const availability = redisAvailability();
const FAST = { beatMs: 200, expiryMs: 2_000, claimIdleMs: 600, blockMs: 1_000, replyTtlMs: 10_000 };

describe.skipIf(!availability.available)("the Redis fan-out through a Redis outage", () => {
  let redis: RedisServerFixture;
  let targets: HttpTargets;
  let runner: DiagnosticRunner;
  let worker: RedisFanout;
  let dispatcher: RedisFanout;

  beforeAll(async () => {
    redis = await startRedisServer();
    targets = await startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 } } });
    runner = diagnosticRunnerFromConfig(
      loadConfig({ SITEDIAG_PROBE_THREADS: "0", SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8", SITEDIAG_HOSTS_FILE: "/dev/null" }),
      undefined,
    );
    const location = { kind: "redis", url: redis.url() } as const;
    worker = await createRedisFanout({ location, self: { name: "eu-west" }, runner, maxJobs: 4, timing: FAST });
    dispatcher = await createRedisFanout({ location, self: { name: "tester" }, maxJobs: 1, timing: FAST });
  }, 60_000);

  afterAll(async () => {
    await dispatcher?.close();
    await worker?.close();
    await runner?.close();
    await targets?.close();
    await redis?.close();
  });

  const once = (deadlineMs: number) =>
    collect(dispatcher, { kind: "site-check", raw: targets.url("/ok"), options: {} }, ["eu-west"], sharedClockMs() + deadlineMs);

  it("answers `unavailable` by the deadline while Redis is down, is not ready, and answers again once it is back", async () => {
    expect((await once(5_000)).map((entry) => entry.state)).toEqual(["answered"]);
    expect(await worker.ready()).toBe(true);
    await redis.stop();
    try {
      const deadline = sharedClockMs() + 1_500;
      const entries = await once(1_500);
      expect(entries).toHaveLength(1);
      expect(entries[0]?.state).toBe("unavailable");
      // By the deadline, give or take how late a busy machine runs a timer.
      expect(sharedClockMs()).toBeLessThan(deadline + 3_000);
      expect(await worker.ready()).toBe(false);
    } finally {
      await redis.start();
    }
    await eventually(async () => ((await once(3_000))[0]?.state === "answered" ? true : undefined), 30_000);
    expect(await worker.ready()).toBe(true);
  }, 60_000);
});
