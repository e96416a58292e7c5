import { Database } from "../../src/access/sqlite-store.js";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Charge } from "../../src/access/credit-log.js";
import type { AccessStore } from "../../src/access/store.js";
import { redisAvailability, startRedisServer, type RedisServerFixture } from "../../testkit/redis-server.js";
import { newKey, redisStoreUnderTest, sqliteStoreUnderTest, type StoreUnderTest } from "../fixtures/store-harness.js";

// White-box checks of how the stores keep a key's window: a running total of
// credits beside a log that holds only charges inside the window, kept equal
// to the log across expiry, and rebuilt from the log when it is missing.

/** Direct access to what a store wrote for one key, bypassing the store. */
interface RawCredits {
  /** The stored charge log, oldest first. */
  log(keyId: string): Promise<Charge[]>;
  /** The stored running total; null when there is none. */
  total(keyId: string): Promise<number | null>;
  /** Adds charges made `ageMs` before the store's clock, the way the version without totals wrote them. */
  addLegacyCharges(keyId: string, charges: readonly { readonly ageMs: number; readonly cost: number }[]): Promise<void>;
  /** Deletes the key's running total, leaving its log. */
  dropTotal(keyId: string): Promise<void>;
  /** Removes what the version without totals did not write; the store must be opened again afterwards. */
  becomeLegacy(keyId: string): Promise<void>;
  close(): void;
}

const redis = redisAvailability();
let redisServer: RedisServerFixture | undefined;

beforeAll(async () => {
  if (redis.available) redisServer = await startRedisServer();
});
afterAll(async () => {
  await redisServer?.close();
});

const kinds = [
  { kind: "sqlite", skip: false, create: () => sqliteStoreUnderTest(), raw: rawSqlite },
  {
    kind: "redis",
    skip: !redis.available,
    create: () => {
      if (redisServer === undefined) throw new Error("the test Redis did not start");
      return redisStoreUnderTest(redisServer);
    },
    raw: rawRedis,
  },
] as const;

const DAY = { budget: 15, windowSeconds: 86_400 };
const DAY_MS = DAY.windowSeconds * 1_000;

describe.each(kinds)("credit totals on $kind", ({ skip, create, raw: openRaw }) => {
  let harness: StoreUnderTest;
  let store: AccessStore;
  let raw: RawCredits;

  afterEach(async () => {
    raw?.close();
    await harness?.cleanup();
  });

  async function fresh(): Promise<void> {
    harness = create();
    store = await harness.open();
    raw = openRaw(harness);
  }

  it.skipIf(skip)("keeps the total equal to the log across expiry, storing only charges inside the window", async () => {
    await fresh();
    // One second: long enough that a charge is still inside it when read back on a loaded machine
    // (0.2 s was not: the charge had aged out before the log was read, and the log was empty).
    const short = { budget: 1_000, windowSeconds: 1 };
    const key = await newKey(store);
    const costs = Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? 5 : 2));
    for (const cost of costs) await store.charge(key.digest, cost, short);
    expect(await raw.log(key.record.id)).toHaveLength(30);
    expect(await raw.total(key.record.id)).toBe(costs.reduce((a, b) => a + b, 0));

    // Every charge above is now older than the window; the next charges must clear them all.
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    for (let made = 1; made <= 10; made++) {
      const outcome = await store.charge(key.digest, 2, short);
      expect(outcome.kind).toBe("admitted");
      const log = await raw.log(key.record.id);
      const logged = log.reduce((sum, charge) => sum + charge.cost, 0);
      expect(log.length).toBeGreaterThanOrEqual(1);
      expect(log.length).toBeLessThanOrEqual(made);
      expect(await raw.total(key.record.id)).toBe(logged);
      expect(outcome.kind === "admitted" ? outcome.usage.used : -1).toBe(logged);
    }
  });

  it.skipIf(skip)("lets an idle key's data go: nothing is left once its charges age out", async () => {
    await fresh();
    const short = { budget: 100, windowSeconds: 0.2 };
    const key = await newKey(store);
    for (let i = 0; i < 5; i++) await store.charge(key.digest, 2, short);
    expect(await raw.total(key.record.id)).toBe(10);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await store.usage(key.record.id, short)).toMatchObject({ used: 0, remaining: 100, resetSeconds: 0 });
    expect(await raw.log(key.record.id)).toEqual([]);
    expect(await raw.total(key.record.id)).toBeNull();
  });

  it.skipIf(skip)("counts a log written before totals existed once, dropping its expired charges, then stays exact", async () => {
    await fresh();
    const key = await newKey(store);
    await raw.addLegacyCharges(key.record.id, [
      { ageMs: DAY_MS + 60_000, cost: 5 }, // aged out: must not count
      { ageMs: DAY_MS + 1_000, cost: 5 }, // aged out: must not count
      { ageMs: 50_000, cost: 2 },
      { ageMs: 40_000, cost: 5 },
      { ageMs: 30_000, cost: 2 },
      { ageMs: 20_000, cost: 2 },
    ]);
    await raw.becomeLegacy(key.record.id);
    store = await harness.open();

    expect(await store.usage(key.record.id, DAY)).toMatchObject({ used: 11, remaining: 4 });
    expect(await raw.log(key.record.id)).toHaveLength(4);
    expect(await raw.total(key.record.id)).toBe(11);
    expect(await store.charge(key.digest, 2, DAY)).toMatchObject({ kind: "admitted", usage: { used: 13 } });
    const refused = await store.charge(key.digest, 5, DAY);
    // 13 + 5 needs 3 freed: the oldest live 2 is not enough, the 5 made 40 s ago is, when it ages out.
    expect(refused).toMatchObject({ kind: "rejected", usage: { used: 13, remaining: 2 } });
    if (refused.kind === "rejected") {
      expect(refused.retryAfterSeconds).toBeGreaterThan(DAY.windowSeconds - 40 - 5);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(DAY.windowSeconds - 40 + 1);
    }
    expect(await store.charge(key.digest, 2, DAY)).toMatchObject({ kind: "admitted", usage: { used: 15, remaining: 0 } });
    expect(await store.charge(key.digest, 1, DAY)).toMatchObject({ kind: "rejected", usage: { used: 15 } });
    expect(await raw.log(key.record.id)).toHaveLength(6);
    expect(await raw.total(key.record.id)).toBe(15);
  });

  it.skipIf(skip)("rebuilds a lost total from the log mid-window, and a refusal after it records nothing", async () => {
    await fresh();
    const key = await newKey(store);
    for (let i = 0; i < 7; i++) expect((await store.charge(key.digest, 2, DAY)).kind).toBe("admitted");
    expect(await raw.total(key.record.id)).toBe(14);
    await raw.dropTotal(key.record.id);
    expect(await store.charge(key.digest, 2, DAY)).toMatchObject({ kind: "rejected", usage: { used: 14, remaining: 1 } });
    expect(await raw.log(key.record.id)).toHaveLength(7);
    expect(await raw.total(key.record.id)).toBe(14);
    expect(await store.charge(key.digest, 1, DAY)).toMatchObject({ kind: "admitted", usage: { used: 15, remaining: 0 } });
    expect(await raw.total(key.record.id)).toBe(15);
  });
});

describe.skipIf(!redis.available)("credit totals on redis: expiry", () => {
  let harness: StoreUnderTest | undefined;
  let client: Redis | undefined;

  afterEach(async () => {
    client?.disconnect();
    await harness?.cleanup();
  });

  it("lets a key's log and total expire together one window after its newest charge", async () => {
    if (redisServer === undefined) throw new Error("the test Redis did not start");
    harness = redisStoreUnderTest(redisServer);
    const store = await harness.open();
    client = new Redis(redisServer.url());
    const prefix = harness.options.keyPrefix ?? "sitediag:";
    const key = await newKey(store);
    const window = { budget: 100, windowSeconds: 60 };
    for (let i = 0; i < 3; i++) await store.charge(key.digest, 2, window);
    // PTTL rather than PEXPIRETIME, which needs Redis 7. The total is read second, so it cannot have more time left.
    const logTtl = await client.pttl(`${prefix}charges:{${key.record.id}}`);
    const totalTtl = await client.pttl(`${prefix}credits-used:{${key.record.id}}`);
    expect(logTtl).toBeGreaterThan(0);
    expect(logTtl).toBeLessThanOrEqual(60_000);
    expect(totalTtl).toBeGreaterThan(0);
    expect(totalTtl).toBeLessThanOrEqual(logTtl);
  });
});

function rawSqlite(harness: StoreUnderTest): RawCredits {
  if (harness.location.kind !== "sqlite") throw new Error("not a SQLite store");
  const path = harness.location.path;
  const db = new Database(path);
  return {
    log: async (keyId) =>
      db
        .prepare<[string], { charged_at_ms: number; cost: number }>(
          "SELECT charged_at_ms, cost FROM credit_charges WHERE key_id = ? ORDER BY charged_at_ms",
        )
        .all(keyId)
        .map((row) => ({ atMs: row.charged_at_ms, cost: row.cost })),
    total: async (keyId) => {
      const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'credit_totals'").get() !== undefined;
      if (!hasTable) return null;
      return db.prepare<[string], number>("SELECT used FROM credit_totals WHERE key_id = ?").pluck().get(keyId) ?? null;
    },
    addLegacyCharges: async (keyId, charges) => {
      const insert = db.prepare("INSERT INTO credit_charges (key_id, charged_at_ms, cost) VALUES (?, ?, ?)");
      const now = Date.now();
      for (const charge of charges) insert.run(keyId, now - charge.ageMs, charge.cost);
    },
    dropTotal: async (keyId) => {
      db.prepare("DELETE FROM credit_totals WHERE key_id = ?").run(keyId);
    },
    // The version without totals had no credit_totals table at all; the store creates it again when it opens.
    becomeLegacy: async () => {
      db.exec("DROP TABLE credit_totals");
    },
    close: () => db.close(),
  };
}

function rawRedis(harness: StoreUnderTest): RawCredits {
  if (harness.location.kind !== "redis") throw new Error("not a Redis store");
  const prefix = harness.options.keyPrefix ?? "sitediag:";
  const client = new Redis(harness.location.url);
  const charges = (id: string) => `${prefix}charges:{${id}}`;
  const total = (id: string) => `${prefix}credits-used:{${id}}`;
  return {
    log: async (keyId) => {
      const flat = await client.zrange(charges(keyId), 0, -1, "WITHSCORES");
      const log: Charge[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2)
        log.push({ atMs: Number(flat[i + 1]), cost: Number(/:(\d+)$/.exec(flat[i] ?? "")?.[1]) });
      return log;
    },
    total: async (keyId) => {
      const value = await client.get(total(keyId));
      return value === null ? null : Number(value);
    },
    // As the version without totals did: members "<seq>:<cost>" scored by Redis' millisecond, seq in the key record.
    addLegacyCharges: async (keyId, added) => {
      const [seconds, micros] = await client.time();
      const now = Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000);
      for (const [index, charge] of added.entries()) await client.zadd(charges(keyId), now - charge.ageMs, `${index + 1}:${charge.cost}`);
      await client.hset(`${prefix}key:{${keyId}}`, "charge_seq", added.length);
      await client.pexpire(charges(keyId), DAY_MS);
    },
    dropTotal: async (keyId) => {
      await client.del(total(keyId));
    },
    becomeLegacy: async (keyId) => {
      await client.del(total(keyId));
    },
    close: () => client.disconnect(),
  };
}
