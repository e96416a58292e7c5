import type { StoreLocation } from "../config.js";
import { openRedisStore, type RedisStoreOptions } from "./redis-store.js";
import { openSqliteStore, type SqliteStoreOptions } from "./sqlite-store.js";
import type { AccessStore } from "./store.js";

export type OpenStoreOptions = SqliteStoreOptions & RedisStoreOptions;

/** Opens the store SITEDIAG_STORE names; rejects with StoreUnavailableError when it cannot be reached. */
export async function openStore(location: StoreLocation, options: OpenStoreOptions = {}): Promise<AccessStore> {
  switch (location.kind) {
    case "sqlite":
      return openSqliteStore(location.path, options);
    case "redis":
      return openRedisStore({ kind: "server", url: location.url }, options);
    case "redis-cluster":
      return openRedisStore({ kind: "cluster", nodes: location.nodes, password: location.password }, options);
  }
}
