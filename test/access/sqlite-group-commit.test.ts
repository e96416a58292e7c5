import { Database } from "../../src/access/sqlite-store.js";
import { afterEach, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../src/access/store.js";
import { newKey, sqliteStoreUnderTest, type StoreUnderTest } from "../fixtures/store-harness.js";

// Charges asked for in one turn of the loop share one SQLite transaction:
// decided in the order they were asked, exactly, and all or nothing.

let underTest: StoreUnderTest | undefined;
afterEach(async () => {
  await underTest?.cleanup();
  underTest = undefined;
});

describe("SQLite group commit", () => {
  it("decides a burst in call order: the first that fit are admitted, every later one refused", async () => {
    underTest = sqliteStoreUnderTest();
    const store = await underTest.open();
    const key = await newKey(store);
    const policy = { budget: 300, windowSeconds: 86_400 };
    // Mixed costs in one tick: 2, 5, 2, 5, ... until the budget runs out part-way through.
    const costs = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? 2 : 5));
    const outcomes = await Promise.all(costs.map((cost) => store.charge(key.digest, cost, policy)));
    let expectedUsed = 0;
    outcomes.forEach((outcome, index) => {
      const cost = costs[index] ?? 0;
      const fits = expectedUsed + cost <= policy.budget;
      if (fits) expectedUsed += cost;
      expect(outcome.kind, `charge ${index}`).toBe(fits ? "admitted" : "rejected");
    });
    expect((await store.usage(key.record.id, policy)).used).toBe(expectedUsed);
  });

  it("keeps each key's window apart within a burst, refuses an unknown key in it, and counts a charge that aged out before it", async () => {
    underTest = sqliteStoreUnderTest();
    const store = await underTest.open();
    const first = await newKey(store);
    const second = await newKey(store);
    const policy = { budget: 6, windowSeconds: 1 };
    expect((await store.charge(first.digest, 4, policy)).kind).toBe("admitted");
    // The 4 credits age out of the 1 s window before the burst: its first read of the window drops them.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const burst = [
      [first.digest, 2],
      [second.digest, 5],
      ["not-a-digest", 1],
      [first.digest, 2],
      [second.digest, 2],
      [first.digest, 2],
      [first.digest, 2],
    ] as const;
    const outcomes = await Promise.all(burst.map(([digest, cost]) => store.charge(digest, cost, policy)));
    expect(outcomes.map((outcome) => outcome.kind)).toEqual([
      "admitted",
      "admitted",
      "unauthenticated",
      "admitted",
      "rejected",
      "admitted",
      "rejected",
    ]);
    expect(outcomes.map((outcome) => (outcome.kind === "unauthenticated" ? null : outcome.usage.used))).toEqual([2, 5, null, 4, 5, 6, 6]);
    // The totals the burst saved are what a fresh read of each log says.
    expect((await store.usage(first.record.id, policy)).used).toBe(6);
    expect((await store.usage(second.record.id, policy)).used).toBe(5);
  });

  it("commits the burst as one transaction: another connection sees none of it, then all of it", async () => {
    underTest = sqliteStoreUnderTest();
    const store = await underTest.open();
    const key = await newKey(store);
    const location = underTest.location;
    if (location.kind !== "sqlite") throw new Error("sqlite expected");
    const reader = new Database(location.path, { readonly: true });
    const count = () => Number(reader.prepare("SELECT COUNT(*) FROM credit_charges").pluck().get());
    try {
      const burst = Array.from({ length: 50 }, () => store.charge(key.digest, 2, { budget: 1_000, windowSeconds: 86_400 }));
      // Asked for, not yet written: the batch waits for the end of this turn of the loop.
      expect(count()).toBe(0);
      await Promise.all(burst);
      expect(count()).toBe(50);
    } finally {
      reader.close();
    }
  });

  it("commits a burst larger than one transaction holds in groups as it is asked, still decided in call order", async () => {
    underTest = sqliteStoreUnderTest();
    const store = await underTest.open();
    const key = await newKey(store);
    const location = underTest.location;
    if (location.kind !== "sqlite") throw new Error("sqlite expected");
    const reader = new Database(location.path, { readonly: true });
    const count = () => Number(reader.prepare("SELECT COUNT(*) FROM credit_charges").pluck().get());
    try {
      // A budget that runs out in the third group: 150 charges of 2 against 290 credits.
      const policy = { budget: 290, windowSeconds: 86_400 };
      const burst = Array.from({ length: 150 }, () => store.charge(key.digest, 2, policy));
      // Still this turn: each full group of 64 was written as it filled (a burst's first checks need not
      // wait for its last), the other 22 wait for the end of the turn.
      expect(count()).toBe(128);
      const outcomes = await Promise.all(burst);
      expect(outcomes.map((outcome) => outcome.kind)).toEqual(
        Array.from({ length: 150 }, (_, index) => (index < 145 ? "admitted" : "rejected")),
      );
      expect(count()).toBe(145);
      expect((await store.usage(key.record.id, policy)).used).toBe(290);
    } finally {
      reader.close();
    }
  });

  it("rejects every charge of a batch whose transaction cannot run, and charges nothing", async () => {
    underTest = sqliteStoreUnderTest();
    const store = await underTest.open();
    const key = await newKey(store);
    const location = underTest.location;
    if (location.kind !== "sqlite") throw new Error("sqlite expected");
    // Another process holds the write lock for longer than the store waits for it.
    const blocker = new Database(location.path);
    blocker.exec("BEGIN IMMEDIATE");
    const blocked = await underTest.open();
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 5 }, () => blocked.charge(key.digest, 2, { budget: 300, windowSeconds: 86_400 })),
      );
      for (const result of results) {
        expect(result.status).toBe("rejected");
        if (result.status === "rejected") expect(result.reason).toBeInstanceOf(StoreUnavailableError);
      }
    } finally {
      blocker.exec("ROLLBACK");
      blocker.close();
    }
    expect((await store.usage(key.record.id, { budget: 300, windowSeconds: 86_400 })).used).toBe(0);
  });
});

describe("SQLite files made before keys had budgets of their own", () => {
  it("gain the column on open, their keys keeping the instance's budget", async () => {
    underTest = sqliteStoreUnderTest();
    const location = underTest.location;
    if (location.kind !== "sqlite") throw new Error("sqlite expected");
    const store = await underTest.open();
    const key = await newKey(store);
    await store.close();
    const old = new Database(location.path);
    // What the file looked like before: api_keys without the budget column.
    old.exec("ALTER TABLE api_keys DROP COLUMN budget");
    old.close();

    const reopened = await underTest.open();
    expect((await reopened.findKeyByDigest(key.digest))?.budget).toBeNull();
    expect(await reopened.charge(key.digest, 2, { budget: 300, windowSeconds: 86_400 })).toMatchObject({
      kind: "admitted",
      usage: { budget: 300 },
    });
    expect(await reopened.setKeyBudget(key.record.id, 4)).toMatchObject({ budget: 4 });
  });
});
