import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sharedClockMs } from "../../src/probe/clock.js";
import { createRedisFanout, type RedisFanout } from "../../src/vantage/redis/redis-fanout.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type RedisServerFixture, redisAvailability, startRedisServer } from "../../testkit/redis-server.js";
import { collect, eventually, type ServeProcess, startServe } from "../fixtures/vantage-rig.js";

// Three vantages on loopback, each `sitediag serve` processes of their own
// with their own DNS server, sharing one Redis as the user docs/vantages.md
// creates; this process sends the jobs through the engine's run().
const availability = redisAvailability();
const PASSWORD = "vantage-test-password";
/** The user docs/vantages.md creates: the sitediag keys only, no dangerous commands. */
const ACL = [
  "resetkeys",
  "~sitediag:*",
  "~{sitediag:*",
  "resetchannels",
  "-@all",
  "+@read",
  "+@write",
  "+@stream",
  "+@scripting",
  "+@connection",
  "+@keyspace",
  "-@dangerous",
  "+info",
  "+time",
];

describe.skipIf(!availability.available)("vantages as `sitediag serve` processes on one Redis", () => {
  let redis: RedisServerFixture;
  let targets: HttpTargets;
  const dns = new Map<string, DnsServer>();
  const serves = new Map<string, ServeProcess>();
  let dispatcher: RedisFanout;
  let storeUrl: string;

  beforeAll(async () => {
    redis = await startRedisServer();
    const admin = new Redis(redis.url());
    await admin.call("ACL", "SETUSER", "sitediag", "on", `>${PASSWORD}`, ...ACL);
    admin.disconnect();
    storeUrl = `redis://sitediag:${PASSWORD}@127.0.0.1:${redis.port}/0`;
    // Every request but the first answers at once; /slow holds each for 3 s.
    targets = await startHttpTargets({
      routes: {
        "/ok": { kind: "respond", status: 200 },
        "/slow": { kind: "delayed", delayMs: 3_000, then: { kind: "respond", status: 200 } },
      },
    });
    for (const name of ["eu-west-a", "eu-west-b", "us-east", "ap-south"]) {
      const server = await startDnsServer();
      server.answer("site.test", name === "ap-south" ? "nxdomain" : { a: ["127.0.0.1"] });
      dns.set(name, server);
    }
    const start = async (name: string, vantage: string) => {
      const server = dns.get(name);
      if (server === undefined) throw new Error(name);
      serves.set(
        name,
        await startServe({
          SITEDIAG_STORE: storeUrl,
          SITEDIAG_VANTAGE: vantage,
          SITEDIAG_VANTAGE_LABEL: `${vantage} label`,
          SITEDIAG_DNS_SERVERS: server.server,
          SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8",
        }),
      );
    };
    await Promise.all([
      start("eu-west-a", "eu-west"),
      start("eu-west-b", "eu-west"),
      start("us-east", "us-east"),
      start("ap-south", "ap-south"),
    ]);
    dispatcher = await createRedisFanout({ location: { kind: "redis", url: storeUrl }, self: { name: "tester" }, maxJobs: 1 });
    await eventually(async () => ((await dispatcher.alive()).length === 3 ? true : undefined));
  }, 120_000);

  afterAll(async () => {
    await dispatcher?.close();
    await Promise.all([...serves.values()].map((serve) => serve.kill()));
    for (const server of dns.values()) await server.close();
    await targets?.close();
    await redis?.close();
  });

  it("one target is up in two vantages and unresolvable in the third, each vantage resolving with its own DNS server", async () => {
    expect((await dispatcher.alive()).map((info) => [info.name, info.label])).toEqual([
      ["ap-south", "ap-south label"],
      ["eu-west", "eu-west label"],
      ["us-east", "us-east label"],
    ]);
    const url = targets.url("/ok", { hostname: "site.test" });
    const entries = await collect(
      dispatcher,
      { kind: "site-check", raw: url, options: {} },
      ["eu-west", "us-east", "ap-south"],
      sharedClockMs() + 10_000,
    );
    const states = Object.fromEntries(
      entries.map((entry) => [
        entry.vantage.name,
        entry.state === "answered" && entry.outcome.kind === "result" ? entry.outcome.result.status : entry.state,
      ]),
    );
    expect(states).toEqual({ "eu-west": "up", "us-east": "up", "ap-south": "down" });
    const down = entries.find((entry) => entry.vantage.name === "ap-south");
    if (down?.state !== "answered" || down.outcome.kind !== "result") throw new Error("no answer from ap-south");
    expect(down.outcome.result.failedStage).toBe("dns");
    for (const serve of serves.values()) expect(await fetch(`${serve.url}/readyz`).then((response) => response.status)).toBe(200);
  });

  it("a worker killed mid-job: its sibling in the same vantage takes the job over and answers in time, one entry", async () => {
    const url = targets.url("/slow", { hostname: "site.test" });
    const queried = (name: string) => (dns.get(name)?.queries ?? []).filter((query) => query.name === "site.test").length;
    const before = { a: queried("eu-west-a"), b: queried("eu-west-b") };
    const deadline = sharedClockMs() + 20_000;
    // The options as the operation sends them: its time limits count from the call's arrival.
    const run = collect(dispatcher, { kind: "site-check", raw: url, options: { timeoutsFrom: sharedClockMs() } }, ["eu-west"], deadline);
    // Whichever worker took the job asked its own DNS server: that one dies.
    const holder = await eventually(async () =>
      queried("eu-west-a") > before.a ? "eu-west-a" : queried("eu-west-b") > before.b ? "eu-west-b" : undefined,
    );
    const sibling = holder === "eu-west-a" ? "eu-west-b" : "eu-west-a";
    await serves.get(holder)?.kill();
    const entries = await run;
    expect(entries).toHaveLength(1);
    const [entry] = entries;
    if (entry?.state !== "answered" || entry.outcome.kind !== "result") throw new Error(`no answer: ${JSON.stringify(entry)}`);
    expect(entry.outcome.result.status).toBe("up");
    expect(sharedClockMs()).toBeLessThan(deadline);
    expect(queried(sibling)).toBeGreaterThan(before[sibling === "eu-west-a" ? "a" : "b"]);
  }, 40_000);

  it("a vantage's only worker killed: its entry is `unavailable` by the deadline, the others answer; once its heartbeat expires it is gone from alive()", async () => {
    await serves.get("us-east")?.kill();
    const deadline = sharedClockMs() + 2_500;
    const entries = await collect(
      dispatcher,
      { kind: "site-check", raw: targets.url("/ok"), options: {} },
      ["us-east", "ap-south"],
      deadline,
    );
    expect(entries.map((entry) => [entry.vantage.name, entry.state])).toEqual([
      ["ap-south", "answered"],
      ["us-east", "unavailable"],
    ]);
    const gone = entries[1];
    // The heartbeat may have expired already (no live instance) or not yet (the deadline passed).
    expect(gone?.state === "unavailable" && ["deadline", "no_live_instance"].includes(gone.reason)).toBe(true);
    // By the deadline, give or take how late a busy machine runs a timer.
    expect(sharedClockMs()).toBeLessThan(deadline + 3_000);
    await eventually(async () => ((await dispatcher.alive()).every((info) => info.name !== "us-east") ? true : undefined));
    const later = await collect(
      dispatcher,
      { kind: "site-check", raw: targets.url("/ok"), options: {} },
      ["us-east"],
      sharedClockMs() + 10_000,
    );
    expect(later).toEqual([expect.objectContaining({ state: "unavailable", reason: "no_live_instance" })]);
  }, 40_000);

  it("/readyz of a worker that cannot reach its vantage stream is 503, though the store answers", async () => {
    const admin = new Redis(redis.url());
    // Allowed the store's keys, not the engine's.
    await admin.call(
      "ACL",
      "SETUSER",
      "storeonly",
      "on",
      `>${PASSWORD}`,
      "resetkeys",
      "~sitediag:*",
      "-@all",
      "+@read",
      "+@write",
      "+@stream",
      "+@scripting",
      "+@connection",
      "+@keyspace",
      "-@dangerous",
    );
    admin.disconnect();
    const serve = await startServe({
      SITEDIAG_STORE: `redis://storeonly:${PASSWORD}@127.0.0.1:${redis.port}/0`,
      SITEDIAG_VANTAGE: "cut-off",
    });
    try {
      expect(await fetch(`${serve.url}/healthz`).then((response) => response.status)).toBe(200);
      expect(await fetch(`${serve.url}/readyz`).then((response) => response.status)).toBe(503);
    } finally {
      await serve.kill();
    }
  });
});
