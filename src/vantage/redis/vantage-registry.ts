import type { RedisClient } from "./vantage-redis.js";
import type { VantageKeys } from "./vantage-keys.js";
import type { KnownInstance, KnownVantage, VantageInfo } from "../vantage-fanout.js";

// Which vantages exist and are alive, from the workers' own heartbeats: one
// sorted set, an instance per member (its vantage, label, location, id and
// build), scored by when it last said so. A member older than the expiry is
// dead but still known: `all` asks it (and answers it unavailable at once)
// until it has been silent for the retention window, when the beat trims it.
// Beside it, one hash of each instance's clock offset from the Redis server,
// measured at its beat. Nothing else decides membership.

export interface RegistryTiming {
  /** How often an instance says it lives (ms). */
  readonly beatMs: number;
  /** How long after its last beat an instance counts as gone (ms). */
  readonly expiryMs: number;
  /** How long after its last beat an instance is forgotten (ms): SITEDIAG_VANTAGE_FORGET_AFTER. */
  readonly forgetAfterMs: number;
}

export interface VantageRegistry {
  /** One heartbeat now; rejects when Redis cannot be reached. */
  beat(): Promise<void>;
  /** The vantages with an instance seen within the expiry, by name. */
  alive(): Promise<readonly VantageInfo[]>;
  /** The vantages with an instance seen within the retention window, live or not, by name. */
  known(): Promise<readonly KnownVantage[]>;
  /** Forgets every instance of vantage `name` (a region retired); the number of instances forgotten. A live one comes back at its next beat. */
  forget(name: string): Promise<number>;
  /** Removes this instance's heartbeat (a graceful stop): its vantage goes from the list at once if it was the last. */
  leave(): Promise<void>;
}

/** Member texts are ours, but the set is writable by anyone with the Redis: each is read totally and bounded. */
const MAX_MEMBER_LENGTH = 512;
const MAX_MEMBERS = 10_000;

/** This process's clock minus the Redis server's (ms), the round trip's midpoint taken as the server's moment. */
export async function clockOffsetFromRedis(redis: RedisClient): Promise<number> {
  const before = Date.now();
  const [seconds, micros] = await redis.time();
  const after = Date.now();
  return Math.round((before + after) / 2 - (Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000)));
}

/** `announced`: this instance is a worker of `self`, which is then alive whatever Redis says. */
export function vantageRegistry(
  redis: RedisClient,
  keys: VantageKeys,
  self: VantageInfo,
  instance: string,
  timing: RegistryTiming,
  announced: boolean,
): VantageRegistry {
  const member = JSON.stringify([self.name, self.label ?? null, self.location ?? null, instance, self.version ?? null]);
  const clocks = `${keys.seen}:clock`;
  const read = async (since: number) => {
    const flat = await redis.zrangebyscore(keys.seen, since, "+inf", "WITHSCORES", "LIMIT", 0, MAX_MEMBERS);
    const members: { readonly info: VantageInfo; readonly instance: string; readonly at: number }[] = [];
    for (let index = 0; index + 1 < flat.length; index += 2) {
      const parsed = readMember(flat[index] ?? "");
      const at = Number(flat[index + 1]);
      if (parsed !== undefined && Number.isFinite(at)) members.push(Object.assign(parsed, { at }));
    }
    return members;
  };
  // A beat still under way when the instance leaves would put it back on the list: leaving waits for it.
  let beating: Promise<void> = Promise.resolve();
  const beatOnce = async () => {
    // The offset is a courtesy to `vantages list`: a Redis user without TIME still beats.
    const offset = await clockOffsetFromRedis(redis).catch(() => undefined);
    const now = Date.now();
    const cutoff = now - timing.forgetAfterMs;
    const forgotten = await redis.zrangebyscore(keys.seen, "-inf", cutoff, "LIMIT", 0, 100);
    const gone = forgotten.map((text) => readMember(text)?.instance).filter((id): id is string => id !== undefined);
    await Promise.all([
      redis.zadd(keys.seen, now, member),
      ...(offset === undefined ? [] : [redis.hset(clocks, instance, String(offset))]),
      ...(forgotten.length === 0 ? [] : [redis.zrem(keys.seen, ...forgotten)]),
      ...(gone.length === 0 ? [] : [redis.hdel(clocks, ...gone)]),
    ]);
  };
  return {
    beat: () => {
      const beat = beatOnce();
      beating = beat.catch(() => undefined);
      return beat;
    },
    alive: async () => {
      const byName = new Map<string, VantageInfo>();
      // The newest member of a vantage speaks for it: members come oldest first.
      for (const { info } of await read(Date.now() - timing.expiryMs)) byName.set(info.name, info);
      if (announced) byName.set(self.name, self);
      return [...byName.values()].sort(byInfoName);
    },
    known: async () => {
      const now = Date.now();
      const members = await read(now - timing.forgetAfterMs);
      const offsets = members.length === 0 ? [] : await redis.hmget(clocks, ...members.map((entry) => entry.instance));
      const byName = new Map<string, { info: VantageInfo; lastSeen: number; instances: KnownInstance[] }>();
      members.forEach((entry, index) => {
        const live = entry.at >= now - timing.expiryMs;
        const offset = Number(offsets[index] ?? Number.NaN);
        const known = byName.get(entry.info.name) ?? { info: entry.info, lastSeen: entry.at, instances: [] };
        known.info = entry.info;
        known.lastSeen = Math.max(known.lastSeen, entry.at);
        known.instances.push({
          id: entry.instance,
          lastSeen: entry.at,
          live,
          version: entry.info.version,
          clockOffsetMs: Number.isFinite(offset) ? offset : undefined,
        });
        byName.set(entry.info.name, known);
      });
      const list: KnownVantage[] = [...byName.values()].map((known) => ({
        info: known.info,
        lastSeen: known.lastSeen,
        live: known.instances.some((one) => one.live),
        instances: known.instances,
      }));
      if (announced && !list.some((known) => known.info.name === self.name))
        list.push({ info: self, lastSeen: now, live: true, instances: [] });
      return list
        .map((known) => (announced && known.info.name === self.name ? Object.assign({}, known, { live: true }) : known))
        .sort((a, b) => byInfoName(a.info, b.info));
    },
    forget: async (name) => {
      const all = await redis.zrangebyscore(keys.seen, "-inf", "+inf", "LIMIT", 0, MAX_MEMBERS);
      const mine = all.filter((text) => readMember(text)?.info.name === name);
      if (mine.length === 0) return 0;
      const ids = mine.map((text) => readMember(text)?.instance).filter((id): id is string => id !== undefined);
      await Promise.all([redis.zrem(keys.seen, ...mine), ...(ids.length === 0 ? [] : [redis.hdel(clocks, ...ids)])]);
      return mine.length;
    },
    leave: async () => {
      await beating;
      await Promise.all([redis.zrem(keys.seen, member), redis.hdel(clocks, instance)]);
    },
  };
}

function byInfoName(a: VantageInfo, b: VantageInfo): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

const NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
const VERSION_TEXT = /^[0-9A-Za-z.+_-]{1,64}$/;

function readMember(text: string): { readonly info: VantageInfo; readonly instance: string } | undefined {
  if (text.length > MAX_MEMBER_LENGTH) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  const [name, label, location, instance, version] = parsed as unknown[];
  if (typeof name !== "string" || !NAME.test(name)) return undefined;
  return {
    info: {
      name,
      label: typeof label === "string" ? label : undefined,
      location: typeof location === "string" ? location : undefined,
      version: typeof version === "string" && VERSION_TEXT.test(version) ? version : undefined,
    },
    instance: typeof instance === "string" ? instance.slice(0, 64) : "",
  };
}
