import type { RedisClient } from "./vantage-redis.js";
import type { VantageKeys } from "./vantage-keys.js";
import type { VantageInfo } from "./vantage-fanout.js";

// Which vantages exist and are alive, from the workers' own heartbeats: one
// sorted set, an instance per member (its vantage, label, location and id),
// scored by when it last said so. A member older than the expiry is dead;
// the beat trims what has been dead a while, so the set stays as small as
// the fleet. Nothing else decides membership.

export interface RegistryTiming {
  /** How often an instance says it lives (ms). */
  readonly beatMs: number;
  /** How long after its last beat an instance counts as gone (ms). */
  readonly expiryMs: number;
}

export interface VantageRegistry {
  /** One heartbeat now; rejects when Redis cannot be reached. */
  beat(): Promise<void>;
  /** The vantages with an instance seen within the expiry, by name. */
  alive(): Promise<readonly VantageInfo[]>;
  /** Removes this instance's heartbeat (a graceful stop): its vantage goes from the list at once if it was the last. */
  leave(): Promise<void>;
}

/** Member texts are ours, but the set is writable by anyone with the Redis: each is read totally and bounded. */
const MAX_MEMBER_LENGTH = 512;
const MAX_MEMBERS = 10_000;

/** `announced`: this instance is a worker of `self`, which is then alive whatever Redis says. */
export function vantageRegistry(redis: RedisClient, keys: VantageKeys, self: VantageInfo, instance: string, timing: RegistryTiming, announced: boolean): VantageRegistry {
  const member = JSON.stringify([self.name, self.label ?? null, self.location ?? null, instance]);
  return {
    beat: async () => {
      const now = Date.now();
      await Promise.all([redis.zadd(keys.seen, now, member), redis.zremrangebyscore(keys.seen, "-inf", now - 10 * timing.expiryMs)]);
    },
    alive: async () => {
      const members = await redis.zrangebyscore(keys.seen, Date.now() - timing.expiryMs, "+inf", "LIMIT", 0, MAX_MEMBERS);
      const byName = new Map<string, VantageInfo>();
      for (const text of members) {
        const info = readMember(text);
        // The newest member of a vantage speaks for it: members come oldest first.
        if (info !== undefined) byName.set(info.name, info);
      }
      if (announced) byName.set(self.name, self);
      return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    leave: async () => {
      await redis.zrem(keys.seen, member);
    },
  };
}

const NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;

function readMember(text: string): VantageInfo | undefined {
  if (text.length > MAX_MEMBER_LENGTH) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  const [name, label, location] = parsed as unknown[];
  if (typeof name !== "string" || !NAME.test(name)) return undefined;
  return { name, label: typeof label === "string" ? label : undefined, location: typeof location === "string" ? location : undefined };
}
