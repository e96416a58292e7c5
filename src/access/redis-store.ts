import { createHash } from "node:crypto";
import { Cluster, Redis } from "ioredis";
import type { RedisNode } from "../config.js";
import { decideCharge, policyForKey, usageOf, type Charge, type CreditPolicy, type WindowState } from "./credit-log.js";
import { CHARGE_SCRIPT, INSERT_KEY_INDEX_SCRIPT, REFUND_SCRIPT, REVOKE_KEY_SCRIPT, SET_BUDGET_SCRIPT } from "./redis-scripts.js";
import { StoreUnavailableError, type AccessStore, type ChargeOutcome, type KeyRecord, type RevokeOutcome } from "./store.js";

export interface RedisStoreOptions {
  /** Prefix of every Redis key this store touches (default "sitediag:"); lets tests share one server. */
  readonly keyPrefix?: string;
  /** How long one command may take before it fails as unavailable (ms). */
  readonly commandTimeoutMs?: number;
  /** How long opening waits for the first connection (ms). */
  readonly connectTimeoutMs?: number;
  /** Told about every connection error; ioredis keeps reconnecting regardless. */
  readonly onConnectionError?: (error: Error) => void;
}

/** One Redis server (with its replicas, if any), or the seed nodes of a Redis Cluster. */
export type RedisTarget =
  | { readonly kind: "server"; readonly url: string }
  | { readonly kind: "cluster"; readonly nodes: readonly RedisNode[]; readonly password: string | undefined };

/**
 * Keys and charges in Redis, shared by any number of instances. Key records,
 * charge logs and their credit counters are named by key id (never by the
 * secret) with the id as a hash tag, so every key a charge touches lives in
 * one cluster slot and each script stays atomic on a cluster too. The id
 * list and the digest -> id index share one hash tag of their own on a
 * cluster (a server keeps their original names). While Redis is away,
 * commands fail at once (no offline queue) so callers answer 503 instead of
 * hanging, and ioredis reconnects (and, on a cluster, follows a failover
 * or a resharding) in the background, so service resumes by itself.
 */
export async function openRedisStore(target: RedisTarget, options: RedisStoreOptions = {}): Promise<AccessStore> {
  const prefix = options.keyPrefix ?? "sitediag:";
  const index = target.kind === "cluster" ? `${prefix}{key-index}:` : prefix;
  const names = {
    keyIds: `${index}key-ids`,
    digestIndex: `${index}key-digests`,
    record: (id: string) => `${prefix}key:{${id}}`,
    charges: (id: string) => `${prefix}charges:{${id}}`,
    creditsUsed: (id: string) => `${prefix}credits-used:{${id}}`,
  };
  const redis = connect(target, options);
  // Without a listener ioredis reports every failed reconnect attempt as an unhandled error.
  redis.on("error", (error: Error) => options.onConnectionError?.(error));
  await waitUntilReady(redis, options.connectTimeoutMs ?? 2_000).catch(async (error: unknown) => {
    redis.disconnect();
    throw unavailable("connect", error);
  });

  const runScript = createScriptRunner(redis);

  async function readRecord(id: string): Promise<KeyRecord | undefined> {
    return toRecord(await redis.hgetall(names.record(id)));
  }

  async function chargeLog(keyId: string, cost: number, policy: CreditPolicy, mode: "charge" | "peek") {
    const reply = await runScript(
      CHARGE_SCRIPT,
      [names.record(keyId), names.charges(keyId), names.creditsUsed(keyId)],
      [cost, policy.budget, policy.windowSeconds * 1_000, mode],
    );
    return parseChargeReply(reply);
  }

  return {
    kind: "redis",
    insertKey: (record, insertOptions) =>
      guard("insertKey", async () => {
        // The record first, the index second: a key is found only through the index, so
        // a record the index refused (another first key won) is invisible, then removed.
        const fields: Record<string, string | number> = {
          id: record.id,
          name: record.name,
          digest: record.digest,
          created_at_ms: record.createdAtMs,
        };
        if (record.budget !== undefined && record.budget !== null) fields.budget = record.budget;
        await redis.hset(names.record(record.id), fields);
        const args = [record.id, record.digest, record.createdAtMs, insertOptions?.onlyIfEmpty === true ? "1" : "0"];
        const stored = (await runScript(INSERT_KEY_INDEX_SCRIPT, [names.keyIds, names.digestIndex], args)) === 1;
        if (!stored) await redis.del(names.record(record.id));
        return stored;
      }),
    findKeyByDigest: (digest) =>
      guard("findKeyByDigest", async () => {
        const id = await redis.hget(names.digestIndex, digest);
        return id === null ? undefined : readRecord(id);
      }),
    listKeys: () =>
      guard("listKeys", async () => {
        const ids = await redis.zrange(names.keyIds, 0, -1);
        const records = await Promise.all(ids.map(readRecord));
        return records.filter((record): record is KeyRecord => record !== undefined);
      }),
    countKeys: () => guard("countKeys", () => redis.zcard(names.keyIds)),
    revokeKey: (id) =>
      guard("revokeKey", async (): Promise<RevokeOutcome> => {
        const status = await runScript(REVOKE_KEY_SCRIPT, [names.record(id)], []);
        const record = await readRecord(id);
        if (record === undefined) return { kind: "not-found" };
        if (status === "revoked") return { kind: "revoked", record };
        if (status === "already-revoked") return { kind: "already-revoked", record };
        return { kind: "not-found" };
      }),
    setKeyBudget: (id, budget) =>
      guard("setKeyBudget", async () => {
        if ((await runScript(SET_BUDGET_SCRIPT, [names.record(id)], [budget ?? ""])) !== 1) return undefined;
        return readRecord(id);
      }),
    charge: (digest, cost, policy) =>
      guard("charge", async (): Promise<ChargeOutcome> => {
        const keyId = await redis.hget(names.digestIndex, digest);
        if (keyId === null) return { kind: "unauthenticated" };
        const reply = await chargeLog(keyId, cost, policy, "charge");
        if (reply.status === "unauthenticated") return { kind: "unauthenticated" };
        // The script applied the same rule to the same window; this computes the numbers for the headers.
        const decision = decideCharge(reply.state, reply.nowMs, cost, policyForKey(policy, reply.budget), () => reply.walk);
        if (decision.kind !== reply.status) throw new Error(`script said ${reply.status} but the log says ${decision.kind}`);
        if (decision.kind === "rejected") return Object.assign({}, decision, { keyId });
        if (reply.member === null) throw new Error("charge script admitted a charge without naming it");
        return Object.assign({}, decision, { keyId, receipt: { keyId, charge: reply.member } });
      }),
    refund: (receipt, credits) =>
      guard("refund", async () => {
        await runScript(REFUND_SCRIPT, [names.charges(receipt.keyId), names.creditsUsed(receipt.keyId)], [receipt.charge, credits]);
      }),
    usage: (keyId, policy) =>
      guard("usage", async () => {
        const reply = await chargeLog(keyId, 0, policy, "peek");
        return usageOf(reply.state, reply.nowMs, policyForKey(policy, reply.budget));
      }),
    ping: () => guard("ping", async () => void (await redis.ping())),
    close: async () => {
      if (redis.status === "end") return;
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

type RedisClient = Redis | Cluster;

function connect(target: RedisTarget, options: RedisStoreOptions): RedisClient {
  const perConnection = {
    enableOfflineQueue: false,
    // A charge is not idempotent: one sent on a connection that then dropped may
    // have run. ioredis would send it again after reconnecting (at least once);
    // we answer 503 instead (at most once), so nothing is ever charged twice.
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 1,
    commandTimeout: options.commandTimeoutMs ?? 2_000,
    connectTimeout: options.connectTimeoutMs ?? 2_000,
    retryStrategy: (attempt: number) => Math.min(50 * attempt, 1_000),
    // Every command issued in one turn of the loop goes out in one write (one
    // syscall, one round trip for all of them) instead of one write each. Each
    // charge is still its own script, run atomically and in the order sent; a
    // pipeline on a connection that drops fails as a whole and is not resent.
    enableAutoPipelining: true,
  };
  if (target.kind === "server") return new Redis(target.url, perConnection);
  return new Cluster(
    target.nodes.map(({ host, port }) => ({ host, port })),
    {
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      // Re-read the slot map soon after a MOVED or a failed node, so a failover is followed within about a second.
      clusterRetryStrategy: (attempt) => Math.min(100 * attempt, 1_000),
      // No retry of a command whose node connection closed (ioredis' default retries it
      // after 100 ms): it may have run, and a charge must run at most once. MOVED, ASK,
      // TRYAGAIN and CLUSTERDOWN are still followed: those commands did not run.
      retryDelayOnFailover: 0,
      retryDelayOnClusterDown: 100,
      redisOptions: Object.assign({}, perConnection, target.password === undefined ? {} : { password: target.password }),
    },
  );
}

type ScriptRunner = (script: string, keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>;

/** EVALSHA, falling back to EVAL when Redis has lost its script cache (a restart, SCRIPT FLUSH). */
function createScriptRunner(redis: RedisClient): ScriptRunner {
  const digests = new Map<string, string>();
  return async (script, keys, args) => {
    let sha = digests.get(script);
    if (sha === undefined) {
      sha = createHash("sha1").update(script).digest("hex");
      digests.set(script, sha);
    }
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
      return await redis.eval(script, keys.length, ...keys, ...args);
    }
  };
}

interface ChargeReply {
  readonly status: "unauthenticated" | "admitted" | "rejected" | "peek";
  readonly nowMs: number;
  /** The window before this charge. */
  readonly state: WindowState;
  /** On a refusal, the oldest charges, just enough of them to free the refused cost. */
  readonly walk: Charge[];
  /** The budget the script applied: the key's own, else the instance's. */
  readonly budget: number;
  /** The admitted charge's member in the log; null otherwise. */
  readonly member: string | null;
}

function parseChargeReply(reply: unknown): ChargeReply {
  if (!Array.isArray(reply) || (reply.length !== 6 && reply.length !== 7)) throw new Error("charge script returned an unexpected reply");
  const [status, nowMs, used, oldestMs, flat, budget, member] = reply as [unknown, unknown, unknown, unknown, unknown, unknown, unknown];
  if (status !== "unauthenticated" && status !== "admitted" && status !== "rejected" && status !== "peek") {
    throw new Error(`charge script returned status ${String(status)}`);
  }
  if (
    typeof nowMs !== "number" ||
    typeof used !== "number" ||
    !(oldestMs === null || typeof oldestMs === "number") ||
    !Array.isArray(flat) ||
    typeof budget !== "number"
  ) {
    throw new Error("charge script returned an unexpected reply");
  }
  const walk: Charge[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) walk.push({ atMs: Number(flat[i]), cost: Number(flat[i + 1]) });
  return { status, nowMs, state: { used, oldestAtMs: oldestMs }, walk, budget, member: typeof member === "string" ? member : null };
}

function toRecord(hash: Record<string, string>): KeyRecord | undefined {
  const { id, name, created_at_ms: createdAt, revoked_at_ms: revokedAt, budget } = hash;
  if (id === undefined || name === undefined || createdAt === undefined) return undefined;
  return {
    id,
    name,
    createdAtMs: Number(createdAt),
    revokedAtMs: revokedAt === undefined ? null : Number(revokedAt),
    budget: budget === undefined ? null : Number(budget),
  };
}

/**
 * Ready to take a charge: the server connected, or, on a cluster, the slot map
 * read and every master connected. ioredis opens cluster node connections on
 * first use, and without an offline queue (which would send a timed-out charge
 * later, after its caller was told 503) a first command to a node still
 * connecting fails; so the masters are connected before the store is used.
 */
async function waitUntilReady(redis: RedisClient, timeoutMs: number): Promise<void> {
  await ready(redis, timeoutMs);
  if (!(redis instanceof Cluster)) return;
  await Promise.all(
    redis.nodes("master").map((node) => {
      if (node.status === "wait") node.connect().catch(() => undefined);
      return ready(node, timeoutMs);
    }),
  );
}

function ready(redis: RedisClient, timeoutMs: number): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off("ready", onReady);
      reject(new Error(`no connection within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    redis.once("ready", onReady);
  });
}

async function guard<T>(operation: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw unavailable(operation, error);
  }
}

function unavailable(operation: string, error: unknown): StoreUnavailableError {
  const reason = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError("redis", operation, reason, { cause: error });
}
