import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/access/open-store.js";
import { StoreUnavailableError, type AccessStore } from "../../src/access/store.js";
import { redisAvailability, startRedisServer, type RedisServerFixture } from "../../testkit/redis-server.js";
import { accessClient } from "../fixtures/access-router.js";
import { newKey } from "../fixtures/store-harness.js";

const redis = redisAvailability();
const policy = { budget: 300, windowSeconds: 86_400 };

describe.skipIf(!redis.available)("Redis store outage", () => {
  let server: RedisServerFixture;
  const opened: AccessStore[] = [];

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await Promise.all(opened.map((store) => store.close()));
    await server?.close();
  });

  async function open(): Promise<AccessStore> {
    const store = await openStore({ kind: "redis", url: server.url() }, { keyPrefix: "outage:", commandTimeoutMs: 500 });
    opened.push(store);
    return store;
  }

  it("fails closed with 503 while Redis is down and resumes by itself, charging nothing twice", async () => {
    const store = await open();
    const { call } = accessClient({ store, config: { creditBudget: policy.budget, creditWindowSeconds: policy.windowSeconds } });
    const key = await newKey(store);
    for (let i = 0; i < 3; i++) expect((await call("checkSite", key.secret)).error).toBeUndefined();

    await server.stop();
    const during = await Promise.all(Array.from({ length: 5 }, () => call("traceRedirects", key.secret)));
    for (const { error } of during) expect(error?.code).toBe(Code.Unavailable);
    await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.charge(key.digest, 2, policy)).rejects.toMatchObject({ store: "redis", operation: "charge" });

    await server.start();
    await waitFor(() => store.ping());
    const after = await call("checkSite", key.secret);
    expect(after.error).toBeUndefined();
    // 3 calls before and 1 after at 2 credits; the 5 refused during the outage cost nothing.
    expect(after.headers.get("x-ratelimit-used")).toBe("8");
    expect((await store.usage(key.record.id, policy)).used).toBe(8);
  }, 30_000);

  it("refuses to open when Redis cannot be reached", async () => {
    await server.stop();
    try {
      await expect(openStore({ kind: "redis", url: server.url() }, { connectTimeoutMs: 300 })).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
    } finally {
      await server.start();
    }
  });
});

async function waitFor(check: () => Promise<unknown>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
