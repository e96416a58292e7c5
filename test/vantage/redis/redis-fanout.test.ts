import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { sharedClockMs } from "../../../src/probe/clock.js";
import type { DiagnosticRunner } from "../../../src/runner/diagnostic-runner.js";
import { diagnosticRunnerFromConfig } from "../../../src/runner/runner-from-config.js";
import { createRedisFanout, type RedisFanout } from "../../../src/vantage/redis/redis-fanout.js";
import { vantageKeys } from "../../../src/vantage/redis/vantage-keys.js";
import { type DnsServer, startDnsServer } from "../../fixtures/dns-server.js";
import { type HttpTargets, startHttpTargets } from "../../fixtures/http-targets.js";
import { type RedisServerFixture, redisAvailability, startRedisServer } from "../../../testkit/redis-server.js";
import { decodeReply, encodeJob, encodeReply } from "../../../src/vantage/redis/job-codec.js";
import { INLINE_REPLY_BYTES } from "../../../src/vantage/redis/vantage-worker.js";
import { collect, eventually } from "../../fixtures/vantage-rig.js";

// The engine in this process against a real Redis: three vantages, each a
// worker with its own runner and its own DNS server, and a dispatcher that is
// a worker of none. The serve-process tests are in vantage-processes.test.ts.
const availability = redisAvailability();
const PREFIX = "fanout-test:";
const FAST = { beatMs: 200, expiryMs: 1_000, claimIdleMs: 600, blockMs: 1_000, replyTtlMs: 10_000 };

describe.skipIf(!availability.available)("the Redis fan-out, in process", () => {
  let redis: RedisServerFixture;
  let targets: HttpTargets;
  const dns: DnsServer[] = [];
  const runners: DiagnosticRunner[] = [];
  const workers: RedisFanout[] = [];
  let dispatcher: RedisFanout;
  let registry: Registry;
  let dispatcherRegistry: Registry;
  const troubles: string[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    targets = await startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 } } });
    for (const name of ["eu-west", "us-east", "ap-south"]) {
      const server = await startDnsServer();
      // Up in two vantages, unresolvable in the third.
      server.answer("site.test", name === "ap-south" ? "nxdomain" : { a: ["127.0.0.1"] });
      dns.push(server);
      const runner = diagnosticRunnerFromConfig(
        loadConfig({
          SITEDIAG_PROBE_THREADS: "0",
          SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8",
          SITEDIAG_DNS_SERVERS: server.server,
          SITEDIAG_HOSTS_FILE: "/dev/null",
          SITEDIAG_TRACE_PORTS: String(targets.httpPort),
        }),
        undefined,
      );
      runners.push(runner);
      const location = { kind: "redis", url: redis.url() } as const;
      workers.push(
        await createRedisFanout({
          location,
          self: { name, label: `Label ${name}` },
          runner,
          maxJobs: 4,
          keyPrefix: PREFIX,
          timing: FAST,
          registry: name === "eu-west" ? (registry = new Registry()) : undefined,
        }),
      );
    }
    dispatcher = await createRedisFanout({
      location: { kind: "redis", url: redis.url() },
      self: { name: "local" },
      maxJobs: 1,
      keyPrefix: PREFIX,
      timing: FAST,
      registry: (dispatcherRegistry = new Registry()),
      onTrouble: (error) => troubles.push(String(error)),
    });
  }, 60_000);

  afterAll(async () => {
    await dispatcher?.close();
    for (const worker of workers) await worker.close();
    for (const runner of runners) await runner.close();
    for (const server of dns) await server.close();
    await targets?.close();
    await redis?.close();
  });

  it("lists the vantages alive by their heartbeats, with their labels, and not a dispatcher that runs no jobs", async () => {
    expect(await dispatcher.alive()).toEqual([
      { name: "ap-south", label: "Label ap-south", location: undefined },
      { name: "eu-west", label: "Label eu-west", location: undefined },
      { name: "us-east", label: "Label us-east", location: undefined },
    ]);
  });

  it("runs a check in every vantage asked, each with its own resolver: up in two, a DNS failure in the third", async () => {
    const url = targets.url("/ok", { hostname: "site.test" });
    const entries = await collect(
      dispatcher,
      { kind: "site-check", raw: url, options: {} },
      ["eu-west", "us-east", "ap-south"],
      sharedClockMs() + 10_000,
    );
    expect(entries).toHaveLength(3);
    const byName = new Map(entries.map((entry) => [entry.vantage.name, entry]));
    for (const name of ["eu-west", "us-east"]) {
      const entry = byName.get(name);
      expect(entry?.state).toBe("answered");
      if (entry?.state !== "answered" || entry.outcome.kind !== "result") throw new Error(`no result from ${name}`);
      expect(entry.outcome.result).toMatchObject({ status: "up", statusCode: 200, requestedUrl: url });
    }
    const down = byName.get("ap-south");
    if (down?.state !== "answered" || down.outcome.kind !== "result") throw new Error("no result from ap-south");
    expect(down.outcome.result).toMatchObject({ status: "down", failedStage: "dns" });
    expect(down.vantage.label).toBe("Label ap-south");
    // A plain result is small enough to ride in its notice: no round trip to fetch it.
    for (const entry of entries)
      if (entry.state === "answered")
        expect(encodeReply({ ok: true, outcome: entry.outcome }).length).toBeLessThanOrEqual(INLINE_REPLY_BYTES);
  });

  it("traces redirects alike, details included when asked", async () => {
    const url = targets.url("/ok", { hostname: "site.test" });
    const entries = await collect(
      dispatcher,
      { kind: "trace", raw: url, options: { details: true } },
      ["eu-west"],
      sharedClockMs() + 10_000,
    );
    const [entry] = entries;
    if (entry?.state !== "answered" || entry.outcome.kind !== "result") throw new Error("no trace");
    expect(entry.outcome.result.finalStatus).toBe(200);
    expect(entry.outcome.result.details).toBeDefined();
  });

  it("answers a vantage with no live instance `unavailable` at once, without waiting for the deadline", async () => {
    const started = Date.now();
    const entries = await collect(
      dispatcher,
      { kind: "site-check", raw: targets.url("/ok"), options: {} },
      ["nowhere", "eu-west"],
      sharedClockMs() + 60_000,
    );
    expect(entries.map((entry) => [entry.vantage.name, entry.state])).toEqual([
      ["nowhere", "unavailable"],
      ["eu-west", "answered"],
    ]);
    expect(entries[0]).toMatchObject({ reason: "no_live_instance" });
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("applies each vantage's own policy: a private address the vantage does not open is that entry's refusal", async () => {
    const entries = await collect(
      dispatcher,
      { kind: "site-check", raw: "http://10.0.0.1/", options: {} },
      ["us-east"],
      sharedClockMs() + 10_000,
    );
    const [entry] = entries;
    if (entry?.state !== "answered") throw new Error("no answer");
    expect(entry.outcome.kind).toBe("refused");
  });

  it("counts per vantage: jobs run and their time and the stream's pending jobs on the worker; entry latency and unavailable entries on the asker", async () => {
    await collect(
      dispatcher,
      { kind: "site-check", raw: targets.url("/ok"), options: {} },
      ["eu-west", "nowhere"],
      sharedClockMs() + 10_000,
    );
    const worker = await eventually(async () => {
      const text = await registry.metrics();
      return /sitediag_vantage_jobs_pending\{vantage="eu-west",state="taken"\} \d+/.test(text) ? text : undefined;
    }, 5_000);
    expect(worker).toMatch(/sitediag_vantage_jobs_total\{vantage="eu-west",outcome="answered"\} [1-9]/);
    expect(worker).toMatch(/sitediag_vantage_job_duration_seconds_count\{vantage="eu-west"\} [1-9]/);
    expect(worker).toMatch(/sitediag_vantage_jobs_pending\{vantage="eu-west",state="waiting"\} \d+/);
    const asker = await dispatcherRegistry.metrics();
    expect(asker).toMatch(/sitediag_vantage_entry_duration_seconds_count\{vantage="eu-west"\} [1-9]/);
    // A name no instance announced is not a label of its own.
    expect(asker).toMatch(/sitediag_vantage_unavailable_total\{vantage="unknown",reason="no_live_instance"\} [1-9]/);
    expect(asker).not.toMatch(/vantage="nowhere"/);
  });

  it("survives garbage written into a job stream, the reply stream and a reply key, and goes on answering", async () => {
    const raw = new Redis(redis.url());
    const keys = vantageKeys(PREFIX);
    try {
      await raw.xadd(keys.jobs("eu-west"), "*", "job", "{not json");
      await raw.xadd(
        keys.jobs("eu-west"),
        "*",
        "job",
        JSON.stringify({ v: 1, kind: "site-check", raw: "x", deadline: 1e15, dispatcher: "../../x", request: "y" }),
      );
      await raw.xadd(keys.jobs("eu-west"), "*", "other", "field");
      await raw.xadd(keys.jobs("eu-west"), "*", "job", "x".repeat(100_000));
      // Notices and answers for requests nobody waits for, and a value that is no serialized answer.
      for (const dispatcherId of ["nobody", "AAAA"]) {
        await raw.xadd(keys.replies(dispatcherId), "*", "r", "req", "v", "eu-west");
        await raw.hset(keys.reply(dispatcherId, "req"), "eu-west", Buffer.from([0xff, 0x0d, 0x6f, 0x22, 0x99]));
      }
      const entries = await collect(
        dispatcher,
        { kind: "site-check", raw: targets.url("/ok"), options: {} },
        ["eu-west"],
        sharedClockMs() + 10_000,
      );
      expect(entries.map((entry) => entry.state)).toEqual(["answered"]);
      const exposition = await registry.metrics();
      expect(exposition).toMatch(/sitediag_vantage_jobs_total\{vantage="eu-west",outcome="malformed"\} 4/);
    } finally {
      raw.disconnect();
    }
  });

  it("yields a forged, malformed answer to a waiting request as nothing: that vantage ends `unavailable` at the deadline", async () => {
    // A vantage alive by its heartbeat, with no worker reading its stream: only the forger answers.
    const raw = new Redis(redis.url());
    const keys = vantageKeys(PREFIX);
    try {
      await raw.zadd(keys.seen, Date.now() + 60_000, JSON.stringify(["ghost", null, null, "forger"]));
      const run = collect(dispatcher, { kind: "site-check", raw: targets.url("/ok"), options: {} }, ["ghost"], sharedClockMs() + 1_500);
      const job = await waitForJob(raw, keys.jobs("ghost"));
      const { dispatcher: dispatcherId, request } = JSON.parse(job) as { dispatcher: string; request: string };
      await raw.hset(keys.reply(dispatcherId, request), "ghost", Buffer.from("garbage"));
      await raw.xadd(keys.replies(dispatcherId), "*", "r", request, "v", "ghost");
      // And answers in the notice itself: not base64, base64 of garbage, too long.
      for (const inline of ["%%%", Buffer.from("garbage").toString("base64"), "A".repeat(100_000)])
        await raw.xadd(keys.replies(dispatcherId), "*", "r", request, "v", "ghost", "a", inline);
      const entries = await run;
      expect(entries).toEqual([expect.objectContaining({ state: "unavailable", reason: "deadline" })]);
      expect(troubles.some((trouble) => /malformed answer from ghost/.test(trouble))).toBe(true);
    } finally {
      await raw.zrem(keys.seen, JSON.stringify(["ghost", null, null, "forger"]));
      raw.disconnect();
    }
  });

  it("yields one entry for a vantage answered twice (a slow original and its taker), and ignores a notice for a vantage not asked", async () => {
    const raw = new Redis(redis.url());
    const keys = vantageKeys(PREFIX);
    const member = JSON.stringify(["twice", null, null, "forger"]);
    try {
      await raw.zadd(keys.seen, Date.now() + 60_000, member);
      const run = collect(dispatcher, { kind: "site-check", raw: targets.url("/ok"), options: {} }, ["twice"], sharedClockMs() + 1_500);
      const { dispatcher: dispatcherId, request } = JSON.parse(await waitForJob(raw, keys.jobs("twice"))) as {
        dispatcher: string;
        request: string;
      };
      const answer = (status: string) => encodeReply({ ok: true, outcome: { kind: "result", result: { status } } as never });
      // Two answers written past HSETNX (as two workers racing could not): the dispatcher still yields one.
      await raw.hset(keys.reply(dispatcherId, request), "twice", answer("up"), "eu-west", answer("down"));
      for (const vantage of ["twice", "twice", "eu-west"]) await raw.xadd(keys.replies(dispatcherId), "*", "r", request, "v", vantage);
      const entries = await run;
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        vantage: { name: "twice" },
        state: "answered",
        outcome: { kind: "result", result: { status: "up" } },
      });
    } finally {
      await raw.zrem(keys.seen, member);
      raw.disconnect();
    }
  });

  it("on abort ends the iteration without further entries and withdraws the jobs not yet taken", async () => {
    const raw = new Redis(redis.url());
    const keys = vantageKeys(PREFIX);
    const member = JSON.stringify(["idle", null, null, "nobody"]);
    try {
      await raw.zadd(keys.seen, Date.now() + 60_000, member);
      const controller = new AbortController();
      const entries: unknown[] = [];
      const run = (async () => {
        for await (const entry of dispatcher.run(
          { kind: "site-check", raw: targets.url("/ok"), options: {} },
          ["idle", "eu-west"],
          sharedClockMs() + 30_000,
          controller.signal,
        )) {
          entries.push(entry);
          controller.abort();
        }
      })();
      await run;
      // eu-west answered, then the abort: idle's entry never comes, and its job is gone from its stream.
      expect(entries).toHaveLength(1);
      await eventually(async () => ((await raw.xlen(keys.jobs("idle"))) === 0 ? true : undefined), 5_000);
    } finally {
      await raw.zrem(keys.seen, member);
      raw.disconnect();
    }
  });

  it("a worker runs no more jobs at once than its admission, the rest wait in the stream", async () => {
    targets.route("/hang", { kind: "hang" });
    const runner = runners[0];
    if (runner === undefined) throw new Error("no runner");
    const narrow = await createRedisFanout({
      location: { kind: "redis", url: redis.url() },
      self: { name: "narrow" },
      runner,
      maxJobs: 2,
      keyPrefix: PREFIX,
      timing: FAST,
    });
    try {
      const hanging = () => targets.requests.filter((request) => request.target === "/hang").length;
      const before = hanging();
      const deadline = sharedClockMs() + 5_000;
      const runs = Array.from({ length: 5 }, () =>
        collect(dispatcher, { kind: "site-check", raw: targets.url("/hang"), options: {} }, ["narrow"], deadline),
      );
      await eventually(async () => (hanging() - before >= 2 ? true : undefined), 4_000);
      // Held until the deadline: a third would have arrived by now if it could.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(hanging() - before).toBe(2);
      for (const entries of await Promise.all(runs))
        expect(entries).toEqual([expect.objectContaining({ state: "unavailable", reason: "deadline" })]);
      // Every job ends acknowledged and deleted: the two it ran at their deadline, the three it took late.
      const raw = new Redis(redis.url());
      try {
        await eventually(async () => ((await raw.xlen(vantageKeys(PREFIX).jobs("narrow"))) === 0 ? true : undefined), 10_000);
      } finally {
        raw.disconnect();
      }
    } finally {
      await narrow.close();
    }
    // Closed with nothing pending, it has left its vantage's group and the list of the living.
    const raw = new Redis(redis.url());
    try {
      expect(await raw.xinfo("CONSUMERS", vantageKeys(PREFIX).jobs("narrow"), "workers")).toEqual([]);
      expect((await dispatcher.alive()).map((info) => info.name)).not.toContain("narrow");
    } finally {
      raw.disconnect();
    }
  });

  it("runs a job whose deadline is beyond a timer's range to its end, rather than ending it at once", async () => {
    targets.route("/later", { kind: "delayed", delayMs: 300, then: { kind: "respond", status: 200 } });
    const raw = new Redis(redis.url());
    const keys = vantageKeys(PREFIX);
    try {
      const job = {
        job: { kind: "site-check", raw: targets.url("/later"), options: {} },
        deadline: sharedClockMs() + 1e12,
        dispatcher: "far",
        request: "future",
      } as const;
      await raw.xadd(keys.jobs("us-east"), "*", "job", encodeJob(job));
      const answer = await eventually(async () => (await raw.hgetBuffer(keys.reply("far", "future"), "us-east")) ?? undefined, 10_000);
      expect(decodeReply(answer, "site-check")).toMatchObject({
        ok: true,
        value: { ok: true, outcome: { kind: "result", result: { status: "up" } } },
      });
    } finally {
      raw.disconnect();
    }
  });

  it("waits for a deadline beyond a timer's range without spinning on timers", async () => {
    const raw = new Redis(redis.url());
    const keys = vantageKeys(PREFIX);
    const member = JSON.stringify(["far-away", null, null, "nobody"]);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    try {
      await raw.zadd(keys.seen, Date.now() + 60_000, member);
      const controller = new AbortController();
      const run = (async () => {
        for await (const entry of dispatcher.run(
          { kind: "site-check", raw: targets.url("/ok"), options: {} },
          ["far-away"],
          sharedClockMs() + 1e12,
          controller.signal,
        ))
          void entry;
      })();
      await new Promise((resolve) => setTimeout(resolve, 300));
      controller.abort();
      await run;
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain("TimeoutOverflowWarning");
    } finally {
      process.off("warning", onWarning);
      await raw.zrem(keys.seen, member);
      raw.disconnect();
    }
  });
});

async function waitForJob(raw: Redis, stream: string): Promise<string> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const entries = await raw.xrange(stream, "-", "+");
    const fields = entries.at(-1)?.[1];
    if (fields !== undefined && fields[1] !== undefined) return fields[1];
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no job in ${stream}`);
}
