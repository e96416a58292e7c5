import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cluster, Redis } from "ioredis";
import type { StoreLocation } from "../../src/config.js";
import { digestApiKey } from "../../src/access/api-key.js";
import { issueKey } from "../../src/access/issue-key.js";
import { openStore, type OpenStoreOptions } from "../../src/access/open-store.js";
import type { AccessStore } from "../../src/access/store.js";
import type { RedisClusterFixture } from "../fixtures/redis-cluster.js";
import type { RedisServerFixture } from "../../testkit/redis-server.js";

/** One isolated store for one test: its own SQLite file, or its own key prefix on the shared test Redis. */
export interface StoreUnderTest {
  readonly location: StoreLocation;
  readonly options: OpenStoreOptions;
  /** Opens another connection to the same store (another "instance"). */
  open(): Promise<AccessStore>;
  /** Every byte the store holds, for checking that no secret was written. */
  rawContents(): Promise<string>;
  /** Closes every store opened here and removes what was created. */
  cleanup(): Promise<void>;
}

let counter = 0;

/**
 * What these stores are tested for is what they admit and record, not how long
 * Redis may take: that is the outage tests' (redis-outage*.test.ts, which set
 * their own). A machine running two suites at once can hold a command past the
 * 2 s default, and a contract test would then see a store outage that is only
 * the machine's.
 */
const PATIENT = { commandTimeoutMs: 20_000, connectTimeoutMs: 20_000 } as const;

export function sqliteStoreUnderTest(): StoreUnderTest {
  const dir = mkdtempSync(join(tmpdir(), "sitediag-store-"));
  // A nested path proves the directory is created.
  const location: StoreLocation = { kind: "sqlite", path: join(dir, "nested", "sitediag.db") };
  return storeUnderTest(location, {}, async () => {
    const nested = join(dir, "nested");
    return readdirSync(nested)
      .map((file) => readFileSync(join(nested, file)).toString("latin1"))
      .join("\n");
  }, () => rmSync(dir, { recursive: true, force: true }));
}

export function redisStoreUnderTest(server: RedisServerFixture): StoreUnderTest {
  counter += 1;
  const keyPrefix = `test-${process.pid}-${counter}:`;
  const location: StoreLocation = { kind: "redis", url: server.url() };
  return storeUnderTest(location, { keyPrefix, ...PATIENT }, async () => {
    const redis = new Redis(server.url());
    try {
      const parts: string[] = [];
      for (const key of await redis.keys(`${keyPrefix}*`)) {
        const type = await redis.type(key);
        parts.push(key);
        if (type === "hash") parts.push(JSON.stringify(await redis.hgetall(key)));
        if (type === "zset") parts.push(JSON.stringify(await redis.zrange(key, 0, -1, "WITHSCORES")));
      }
      return parts.join("\n");
    } finally {
      redis.disconnect();
    }
  }, () => undefined);
}

/** Its own key prefix on the shared test cluster; keys spread over the three masters by their hash tags. */
export function redisClusterStoreUnderTest(cluster: RedisClusterFixture): StoreUnderTest {
  counter += 1;
  const keyPrefix = `test-${process.pid}-${counter}:`;
  const location: StoreLocation = { kind: "redis-cluster", nodes: cluster.nodes, password: undefined };
  return storeUnderTest(location, { keyPrefix, ...PATIENT }, async () => {
    const client = new Cluster(cluster.nodes.map(({ host, port }) => ({ host, port })));
    try {
      const parts: string[] = [];
      for (const keys of (await cluster.keysByMaster(`${keyPrefix}*`)).values()) {
        for (const key of keys) {
          const type = await client.type(key);
          parts.push(key);
          if (type === "hash") parts.push(JSON.stringify(await client.hgetall(key)));
          if (type === "zset") parts.push(JSON.stringify(await client.zrange(key, 0, -1, "WITHSCORES")));
        }
      }
      return parts.join("\n");
    } finally {
      client.disconnect();
    }
  }, () => undefined);
}

function storeUnderTest(
  location: StoreLocation,
  options: OpenStoreOptions,
  rawContents: () => Promise<string>,
  remove: () => void,
): StoreUnderTest {
  const opened: AccessStore[] = [];
  return {
    location,
    options,
    open: async () => {
      const store = await openStore(location, options);
      opened.push(store);
      return store;
    },
    rawContents,
    cleanup: async () => {
      await Promise.all(opened.map((store) => store.close()));
      remove();
    },
  };
}

/** Issues a key and returns what a request would present and what the store compares. */
export async function newKey(store: AccessStore, name = "test") {
  const issued = await issueKey(store, name);
  if (issued === undefined) throw new Error("key was not stored");
  return { ...issued, digest: digestApiKey(issued.secret) };
}
