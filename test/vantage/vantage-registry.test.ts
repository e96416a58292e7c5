import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectRedis, disconnect, type RedisClient } from "../../src/vantage/redis/vantage-redis.js";
import { vantageKeys } from "../../src/vantage/redis/vantage-keys.js";
import { vantageRegistry } from "../../src/vantage/redis/vantage-registry.js";
import { type RedisServerFixture, redisAvailability, startRedisServer } from "../../testkit/redis-server.js";

// Membership on a real Redis: live within the expiry, known (and asked by
// `all`) within the retention window, trimmed past it; forgetting one; a
// member that is not ours read as nothing.

const availability = redisAvailability();
const keys = vantageKeys("registry-test:");
const TIMING = { beatMs: 1_000, expiryMs: 5_000, forgetAfterMs: 60_000 };

describe.skipIf(!availability.available)("the vantage registry", () => {
  let redis: RedisServerFixture;
  let client: RedisClient;
  let admin: Redis;

  beforeAll(async () => {
    redis = await startRedisServer();
    client = connectRedis({ kind: "redis", url: redis.url() }, { commandTimeoutMs: 2_000, onError: () => undefined });
    admin = new Redis(redis.url());
  });

  afterAll(async () => {
    admin?.disconnect();
    if (client !== undefined) disconnect(client);
    await redis?.close();
  });

  it("knows a silent vantage within the window (not live, its last beat), forgets one past it, and ignores what is not a member of ours", async () => {
    const now = Date.now();
    await admin.zadd(keys.seen, now - 20_000, JSON.stringify(["ap-south", "AP South", null, "i-south", "0.0.1"]));
    await admin.zadd(keys.seen, now - 120_000, JSON.stringify(["gone-west", null, null, "i-gone", "0.0.1"]));
    await admin.zadd(keys.seen, now - 1_000, "not json", now - 1_000, JSON.stringify(["BAD NAME"]));
    const registry = vantageRegistry(client, keys, { name: "eu-west", version: "0.2.0" }, "i-west", TIMING, true);
    await registry.beat();
    expect((await registry.alive()).map((info) => info.name)).toEqual(["eu-west"]);
    const known = await registry.known();
    expect(known.map((vantage) => [vantage.info.name, vantage.live, vantage.info.version])).toEqual([
      ["ap-south", false, "0.0.1"],
      ["eu-west", true, "0.2.0"],
    ]);
    expect(known[0]?.lastSeen).toBe(now - 20_000);
    expect(known[0]?.instances).toEqual([
      { id: "i-south", lastSeen: now - 20_000, live: false, version: "0.0.1", clockOffsetMs: undefined },
    ]);
    // Its own beat measured its clock against the Redis server's.
    expect(typeof known[1]?.instances[0]?.clockOffsetMs).toBe("number");
    // The beat trimmed the member silent past the window.
    expect((await admin.zrange(keys.seen, 0, -1)).some((member) => member.includes("gone-west"))).toBe(false);
  });

  it("forget removes every instance of a vantage, and says how many", async () => {
    const registry = vantageRegistry(client, keys, { name: "eu-west" }, "i-west", TIMING, true);
    expect(await registry.forget("ap-south")).toBe(1);
    expect(await registry.forget("ap-south")).toBe(0);
    expect((await registry.known()).map((vantage) => vantage.info.name)).toEqual(["eu-west"]);
  });
});
