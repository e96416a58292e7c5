import { createHash } from "node:crypto";
import { Cluster, Redis } from "ioredis";
import type { StoreLocation } from "../../config.js";

// The engine's own connections to the store's Redis: a blocking read holds its
// connection for as long as it blocks, so the worker's and the dispatcher's
// reads each have one, and every other command shares a third.

export type RedisClient = Redis | Cluster;

/** The Redis of a `redis` or `redis-cluster` store location. */
export type VantageRedisLocation = Exclude<StoreLocation, { readonly kind: "sqlite" }>;

export interface ConnectOptions {
  /** How long one command may take before it fails (ms); a blocking read's connection adds its block time. */
  readonly commandTimeoutMs: number;
  /** Told about connection errors; ioredis keeps reconnecting regardless. */
  readonly onError: (error: Error) => void;
}

/**
 * A connection as the store makes one: no offline queue (a command while
 * Redis is away fails at once, so a fan-out answers `unavailable` instead of
 * hanging) and no resending of a command whose connection dropped (a job
 * sent twice would run twice; an answer may come twice anyway and is
 * deduplicated, but there is no reason to add to it).
 */
export function connectRedis(location: VantageRedisLocation, options: ConnectOptions): RedisClient {
  const perConnection = {
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 1,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: 2_000,
    retryStrategy: (attempt: number) => Math.min(50 * attempt, 1_000),
    enableAutoPipelining: true,
    // ioredis' auto-pipelining drops the command name of a callBuffer (how scriptOf sends its scripts).
    autoPipeliningIgnoredCommands: ["EVALSHA", "EVAL"],
  };
  const client =
    location.kind === "redis"
      ? new Redis(location.url, perConnection)
      : new Cluster(
          location.nodes.map(({ host, port }) => ({ host, port })),
          {
            enableOfflineQueue: false,
            // Not on a cluster: ioredis follows a MOVED in an auto-pipeline only when every command of the
            // pipeline got the same one, and otherwise never re-reads the slot map, so after a failover two
            // vantages' jobs pipelined to the old master would be refused for good.
            enableAutoPipelining: false,
            // And the slot map is re-read now and then whatever happens, as a net under the same kind of miss.
            slotsRefreshInterval: 5_000,
            clusterRetryStrategy: (attempt) => Math.min(100 * attempt, 1_000),
            retryDelayOnFailover: 0,
            retryDelayOnClusterDown: 100,
            redisOptions: Object.assign({}, perConnection, location.password === undefined ? {} : { password: location.password }),
          },
        );
  client.on("error", (error: Error) => options.onError(error));
  return client;
}

/** Resolves once the connection (on a cluster: the slot map and every master) is ready; rejects after `timeoutMs`. */
export async function whenReady(client: RedisClient, timeoutMs: number): Promise<void> {
  await readyOne(client, timeoutMs);
  if (!(client instanceof Cluster)) return;
  await Promise.all(
    client.nodes("master").map((node) => {
      if (node.status === "wait") node.connect().catch(() => undefined);
      return readyOne(node, timeoutMs);
    }),
  );
}

function readyOne(client: RedisClient, timeoutMs: number): Promise<void> {
  if (client.status === "ready") return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off("ready", onReady);
      reject(new Error(`no Redis connection within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once("ready", onReady);
  });
}

/** Ends a connection at once: a blocked read is not waited for. */
export function disconnect(client: RedisClient): void {
  if (client.status !== "end") client.disconnect();
}

/** EVALSHA of a fixed script, falling back to EVAL when Redis has lost its script cache (a restart, a failover, SCRIPT FLUSH). */
export function scriptOf(
  source: string,
): (client: RedisClient, keys: readonly string[], args: readonly (string | number | Buffer)[]) => Promise<unknown> {
  const sha = createHash("sha1").update(source).digest("hex");
  return async (client, keys, args) => {
    try {
      return await client.callBuffer("EVALSHA", sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
      return await client.callBuffer("EVAL", source, keys.length, ...keys, ...args);
    }
  };
}

/** Waits `ms`, or less when `stopped` resolves first. */
export function pause(ms: number, stopped: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), stopped]).finally(() => clearTimeout(timer));
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
