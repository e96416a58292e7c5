import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { digestApiKey } from "../../src/access/api-key.js";
import { issueKey } from "../../src/access/issue-key.js";
import type { AccessStore } from "../../src/access/store.js";
import { type RedisClusterFixture, startRedisCluster } from "../fixtures/redis-cluster.js";
import { redisAvailability, startRedisServer, type RedisServerFixture } from "../../testkit/redis-server.js";
import {
  newKey,
  redisClusterStoreUnderTest,
  redisStoreUnderTest,
  sqliteStoreUnderTest,
  type StoreUnderTest,
} from "../fixtures/store-harness.js";

const redis = redisAvailability();
let redisServer: RedisServerFixture | undefined;
let redisCluster: RedisClusterFixture | undefined;

beforeAll(async () => {
  if (redis.available) [redisServer, redisCluster] = await Promise.all([startRedisServer(), startRedisCluster()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([redisServer?.close(), redisCluster?.close()]);
});

const kinds = [
  { kind: "sqlite", skip: false, create: () => sqliteStoreUnderTest() },
  {
    kind: "redis",
    skip: !redis.available,
    create: () => {
      if (redisServer === undefined) throw new Error("the test Redis did not start");
      return redisStoreUnderTest(redisServer);
    },
  },
  {
    kind: "redis-cluster",
    skip: !redis.available,
    create: () => {
      if (redisCluster === undefined) throw new Error("the test Redis Cluster did not start");
      return redisClusterStoreUnderTest(redisCluster);
    },
  },
] as const;

const DAY = { budget: 300, windowSeconds: 86_400 };

describe.each(kinds)("AccessStore contract on $kind", ({ skip, create }) => {
  let harness: StoreUnderTest;
  let store: AccessStore;

  afterEach(async () => {
    await harness?.cleanup();
  });

  async function fresh(): Promise<AccessStore> {
    harness = create();
    store = await harness.open();
    return store;
  }

  it.skipIf(skip)("stores a key under its digest with id, name and times, and never the secret", async () => {
    await fresh();
    const before = Date.now();
    const key = await newKey(store, "ci runner");
    expect(key.secret).toMatch(/^sd_[0-9A-Za-z]{28}$/);
    const found = await store.findKeyByDigest(key.digest);
    expect(found).toEqual({ id: key.record.id, name: "ci runner", createdAtMs: key.record.createdAtMs, revokedAtMs: null, budget: null });
    expect(found?.createdAtMs).toBeGreaterThanOrEqual(before);
    expect(await store.findKeyByDigest("0".repeat(64))).toBeUndefined();
    expect(await store.countKeys()).toBe(1);
    const raw = await harness.rawContents();
    expect(raw).toContain(key.digest);
    expect(raw).not.toContain(key.secret);
  });

  it.skipIf(skip)("holds a key with a budget of its own to it, on every instance, from its next charge", async () => {
    await fresh();
    const other = await harness.open();
    const issued = await issueKey(store, "migration audit", { budget: 10 });
    if (issued === undefined) throw new Error("not stored");
    const digest = digestApiKey(issued.secret);
    expect((await store.findKeyByDigest(digest))?.budget).toBe(10);
    expect(await store.charge(digest, 5, DAY)).toMatchObject({ kind: "admitted", usage: { budget: 10, used: 5, remaining: 5 } });
    expect(await other.charge(digest, 5, DAY)).toMatchObject({ kind: "admitted", usage: { budget: 10, used: 10, remaining: 0 } });
    expect(await store.charge(digest, 2, DAY)).toMatchObject({ kind: "rejected", usage: { budget: 10, used: 10 } });
    // A cost above the key's whole budget can never be afforded, whatever the instance's budget is.
    expect(await store.charge(digest, 11, DAY)).toMatchObject({ kind: "rejected", retryAfterSeconds: null });

    expect(await other.setKeyBudget(issued.record.id, 20)).toMatchObject({ id: issued.record.id, budget: 20 });
    expect(await store.charge(digest, 2, DAY)).toMatchObject({ kind: "admitted", usage: { budget: 20, used: 12 } });
    expect(await store.usage(issued.record.id, DAY)).toMatchObject({ budget: 20, used: 12, remaining: 8 });

    expect(await store.setKeyBudget(issued.record.id, null)).toMatchObject({ budget: null });
    expect(await other.usage(issued.record.id, DAY)).toMatchObject({ budget: 300, used: 12, remaining: 288 });
    expect((await store.listKeys()).map((record) => record.budget)).toEqual([null]);
    expect(await store.setKeyBudget("key_00000000000000aa", 5)).toBeUndefined();
  });

  it.skipIf(skip)("lists keys oldest first", async () => {
    await fresh();
    const first = await newKey(store, "one");
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await newKey(store, "two");
    expect((await store.listKeys()).map((record) => record.id)).toEqual([first.record.id, second.record.id]);
  });

  it.skipIf(skip)("inserts only into an empty store when asked, so concurrent first starts issue one key", async () => {
    await fresh();
    const other = await harness.open();
    const records = [1, 2, 3, 4].map((n) => ({
      id: `key_${String(n).padStart(16, "0")}`,
      name: `n${n}`,
      digest: String(n).repeat(64),
      createdAtMs: n,
    }));
    const results = await Promise.all(records.map((record, i) => (i % 2 === 0 ? store : other).insertKey(record, { onlyIfEmpty: true })));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.countKeys()).toBe(1);
    expect(await store.insertKey({ id: "key_00000000000000ff", name: "x", digest: "f".repeat(64), createdAtMs: 9 })).toBe(true);
  });

  it.skipIf(skip)("refuses an unknown digest without charging", async () => {
    await fresh();
    expect(await store.charge("a".repeat(64), 2, DAY)).toEqual({ kind: "unauthenticated" });
  });

  it.skipIf(skip)("revokes once; the very next charge is refused, on another instance too, and charges nothing", async () => {
    await fresh();
    const other = await harness.open();
    const key = await newKey(store);
    expect((await other.charge(key.digest, 2, DAY)).kind).toBe("admitted");
    const revoked = await store.revokeKey(key.record.id);
    expect(revoked.kind).toBe("revoked");
    expect(revoked.kind === "revoked" ? revoked.record.revokedAtMs : null).toBeGreaterThan(0);
    expect(await other.charge(key.digest, 2, DAY)).toEqual({ kind: "unauthenticated" });
    expect((await store.revokeKey(key.record.id)).kind).toBe("already-revoked");
    expect(await store.revokeKey("key_0000000000000000")).toEqual({ kind: "not-found" });
    expect((await store.findKeyByDigest(key.digest))?.revokedAtMs).toBeGreaterThan(0);
    expect((await store.usage(key.record.id, DAY)).used).toBe(2);
  });

  it.skipIf(skip)("admits exactly 150 is-site-down calls of 300 credits; the 151st is refused and records nothing", async () => {
    await fresh();
    const key = await newKey(store);
    const started = Date.now();
    for (let i = 1; i <= 150; i++) {
      const outcome = await store.charge(key.digest, 2, DAY);
      expect(outcome.kind).toBe("admitted");
      if (outcome.kind === "admitted") expect(outcome.usage).toMatchObject({ used: 2 * i, remaining: 300 - 2 * i });
    }
    const refused = await store.charge(key.digest, 2, DAY);
    // Every charge was stamped since `started`: the oldest frees a day after its stamp, so in just under a day less
    // the time the charges took (measured: on a busy machine, 150 round trips can take seconds), rounded up.
    const took = Math.ceil((Date.now() - started) / 1_000);
    expect(refused).toMatchObject({ kind: "rejected", keyId: key.record.id, usage: { used: 300, remaining: 0 } });
    if (refused.kind !== "rejected") return;
    for (const seconds of [refused.retryAfterSeconds, refused.usage.resetSeconds]) {
      expect(seconds).toBeLessThanOrEqual(86_400);
      expect(seconds).toBeGreaterThanOrEqual(86_400 - took);
    }
    expect((await store.usage(key.record.id, DAY)).used).toBe(300);
  });

  it.skipIf(skip)("mixes costs from one budget: a 5 that no longer fits is refused while a 2 still fits", async () => {
    await fresh();
    const key = await newKey(store);
    for (let i = 0; i < 58; i++) expect((await store.charge(key.digest, 5, DAY)).kind).toBe("admitted");
    const steps: [number, string, number][] = [
      [2, "admitted", 292],
      [5, "admitted", 297],
      [5, "rejected", 297],
      [2, "admitted", 299],
      [2, "rejected", 299],
      [1, "admitted", 300],
      [1, "rejected", 300],
    ];
    for (const [cost, kind, used] of steps) {
      const outcome = await store.charge(key.digest, cost, DAY);
      expect({ cost, kind: outcome.kind, used: outcome.kind === "unauthenticated" ? -1 : outcome.usage.used }).toEqual({
        cost,
        kind,
        used,
      });
    }
  });

  it.skipIf(skip)("gives back the charge a receipt names, on every instance: whole, in part, and never more than it cost", async () => {
    await fresh();
    const other = await harness.open();
    const key = await newKey(store);
    const first = await store.charge(key.digest, 5, DAY);
    const second = await store.charge(key.digest, 5, DAY);
    if (first.kind !== "admitted" || second.kind !== "admitted") throw new Error("not admitted");
    expect(first.receipt).not.toEqual(second.receipt);
    // A batch of 5 items whose 2 could not run: 2 of its 5 units back, from another instance.
    await other.refund(second.receipt, 2);
    expect((await store.usage(key.record.id, DAY)).used).toBe(8);
    await store.refund(first.receipt, 5);
    expect((await store.usage(key.record.id, DAY)).used).toBe(3);
    // Already given back whole: a second refund of it gives nothing; asking more than is left gives what is left.
    await store.refund(first.receipt, 5);
    expect((await other.usage(key.record.id, DAY)).used).toBe(3);
    // The next charge sees the credits that came back.
    const budget = { budget: 10, windowSeconds: DAY.windowSeconds };
    expect(await store.charge(key.digest, 7, budget)).toMatchObject({ kind: "admitted", usage: { used: 10, remaining: 0 } });
  });

  it.skipIf(skip)(
    "a refund of a charge that has aged out of the window gives nothing back to later charges",
    async () => {
      await fresh();
      const window = { budget: 4, windowSeconds: 1 };
      const key = await newKey(store);
      const old = await store.charge(key.digest, 2, window);
      if (old.kind !== "admitted") throw new Error("not admitted");
      await sleepUntil(Date.now() + 1_200);
      const chargedAt = Date.now();
      expect((await store.charge(key.digest, 4, window)).kind).toBe("admitted");
      await store.refund(old.receipt, 2);
      const used = (await store.usage(key.record.id, window)).used;
      const rejected = (await store.charge(key.digest, 1, window)).kind;
      // The 4 counts for a second from its stamp: what is read after that (a busy machine) says nothing of the refund.
      if (Date.now() < chargedAt + 1_000) {
        expect(used).toBe(4);
        expect(rejected).toBe("rejected");
      } else {
        expect(used).toBeLessThanOrEqual(4);
      }
    },
    15_000,
  );

  it.skipIf(skip)("keeps one budget per key", async () => {
    await fresh();
    const small = { budget: 4, windowSeconds: 3_600 };
    const a = await newKey(store, "a");
    const b = await newKey(store, "b");
    expect((await store.charge(a.digest, 4, small)).kind).toBe("admitted");
    expect((await store.charge(a.digest, 2, small)).kind).toBe("rejected");
    expect((await store.charge(b.digest, 4, small)).kind).toBe("admitted");
  });

  it.skipIf(skip)(
    "rolls: credits come back when the oldest charge ages out, not before",
    async () => {
      await fresh();
      const window = { budget: 4, windowSeconds: 2 };
      const key = await newKey(store);
      // Each charge is stamped by the store somewhere between its call and its answer; on a busy machine
      // that span can be long, so every assertion about the window is made only where those spans decide it.
      const chargeAt = async () => {
        const calledAt = Date.now();
        const result = await store.charge(key.digest, 2, window);
        return { result, calledAt, answeredAt: Date.now() };
      };
      const a = await chargeAt(); // A
      expect(a.result.kind).toBe("admitted");
      await sleepUntil(a.answeredAt + 700);
      const b = await chargeAt(); // B, 0.7 s or more after A
      expect(b.result.kind).toBe("admitted");
      const full = await store.charge(key.digest, 2, window);
      expect(full.kind).toBe("rejected");
      if (full.kind === "rejected") {
        expect(full.retryAfterSeconds).toBeGreaterThanOrEqual(1); // A frees within 2 s
        expect(full.retryAfterSeconds).toBeLessThanOrEqual(2);
      }
      await sleepUntil(a.calledAt + 1_500);
      const inside = await chargeAt();
      // A still counts while the charge was stamped before A's earliest end.
      if (inside.answeredAt < a.calledAt + 2_000) expect(inside.result.kind).toBe("rejected");
      await sleepUntil(a.answeredAt + 2_300);
      const after = await chargeAt(); // A aged out; B still counts while stamped before B's earliest end
      if (after.answeredAt < b.calledAt + 2_000) expect(after.result).toMatchObject({ kind: "admitted", usage: { used: 4, remaining: 0 } });
      else expect(after.result.kind).toBe("admitted");
      await sleepUntil(after.answeredAt + 2_300);
      expect(await store.usage(key.record.id, window)).toMatchObject({ used: 0, remaining: 4, resetSeconds: 0 });
    },
    20_000,
  );

  it.skipIf(skip)("admits exactly 150 of 200 simultaneous 2-credit charges against 300 credits", async () => {
    await fresh();
    const instances = [store, await harness.open(), await harness.open(), await harness.open()];
    const key = await newKey(store);
    const outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => instances[i % instances.length]!.charge(key.digest, 2, DAY)));
    expect(outcomes.filter((outcome) => outcome.kind === "admitted")).toHaveLength(150);
    expect(outcomes.filter((outcome) => outcome.kind === "rejected")).toHaveLength(50);
    expect((await store.usage(key.record.id, DAY)).used).toBe(300);
  });

  it.skipIf(skip)(
    "two processes sharing the store admit exactly the budget between them",
    async () => {
      await fresh();
      const key = await newKey(store);
      const job = { location: harness.location, options: harness.options, digest: key.digest, attempts: 200, cost: 2, ...DAY };
      const tallies = await runWorkers(2, job);
      expect(tallies.reduce((sum, tally) => sum + tally.admitted, 0)).toBe(150);
      expect(tallies.reduce((sum, tally) => sum + tally.rejected, 0)).toBe(250);
      expect((await store.usage(key.record.id, DAY)).used).toBe(300);
    },
    30_000,
  );
});

function sleepUntil(atMs: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, atMs - Date.now())));
}

interface Tally {
  admitted: number;
  rejected: number;
  unauthenticated: number;
}

const WORKER = fileURLToPath(new URL("../fixtures/charge-worker.ts", import.meta.url));

/** Starts the workers, waits until each has its store open, then releases them together. */
async function runWorkers(count: number, job: object): Promise<Tally[]> {
  const workers = Array.from({ length: count }, () => {
    // Through tsx: the worker is test code, which the build leaves out.
    const child = spawn(process.execPath, ["--import", "tsx", WORKER], {
      env: { ...process.env, SITEDIAG_WORKER_JOB: JSON.stringify(job) },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const exited = new Promise<string | undefined>((resolve) =>
      child.once("exit", (code) => resolve(code === 0 ? undefined : `worker exited with ${code}: ${stderr}`)),
    );
    return { child, lines, exited };
  });
  try {
    for (const worker of workers) expect((await worker.lines.next()).value).toBe("ready");
    for (const worker of workers) worker.child.stdin.end("go\n");
    const failures = (await Promise.all(workers.map((worker) => worker.exited))).filter((failure) => failure !== undefined);
    expect(failures).toEqual([]);
    const tallies: Tally[] = [];
    for (const worker of workers) tallies.push(JSON.parse(String((await worker.lines.next()).value)) as Tally);
    return tallies;
  } finally {
    for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill();
  }
}
