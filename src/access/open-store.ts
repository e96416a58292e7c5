import type { StoreLocation } from "../config.js";
import type { RedisStoreOptions } from "./redis-store.js";
import { openSqliteStore, type SqliteStoreOptions } from "./sqlite-store.js";
import type { AccessStore } from "./store.js";

export type OpenStoreOptions = SqliteStoreOptions & RedisStoreOptions;

/** Opens the store SITEDIAG_STORE names; rejects with StoreUnavailableError when it cannot be reached. */
export async function openStore(location: StoreLocation, options: OpenStoreOptions = {}): Promise<AccessStore> {
  switch (location.kind) {
    case "sqlite":
      return openSqliteStore(location.path, options);
    // Loaded only for a Redis store: a SQLite deployment never uses ioredis, and loaded it holds memory (docs/benchmarks.md).
    case "redis":
      return (await import("./redis-store.js")).openRedisStore({ kind: "server", url: location.url }, options);
    case "redis-cluster":
      return (await import("./redis-store.js")).openRedisStore(
        { kind: "cluster", nodes: location.nodes, password: location.password },
        options,
      );
  }
}
