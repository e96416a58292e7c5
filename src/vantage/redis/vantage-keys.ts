// Every Redis key the vantage engine touches. Each group of keys one command
// or script touches together shares a hash tag, so the engine runs on a Redis
// Cluster as on one server: a vantage's job stream sits in its own slot, a
// dispatcher's reply stream and the reply keys it reads in another.

/** What names may be: a vantage name (config.ts) or an id of ours; nothing that would need escaping in a key. */
const ID = /^[A-Za-z0-9_-]{1,64}$/;

export function isKeyId(value: string): boolean {
  return ID.test(value);
}

export interface VantageKeys {
  /** The stream of a vantage's jobs, read by its workers' consumer group. */
  jobs(vantage: string): string;
  /** Every instance's heartbeat, scored by when it was last seen. */
  readonly seen: string;
  /** A dispatcher's stream of "an answer is in" notices, read by its one blocking loop. */
  replies(dispatcher: string): string;
  /** The answers to one request, a field per vantage, with a short expiry. */
  reply(dispatcher: string, request: string): string;
}

/** The consumer group every worker of a vantage reads its jobs in. */
export const WORKER_GROUP = "workers";

/** Keys under `prefix` (the store's, "sitediag:" by default), e.g. `{sitediag:v:eu-west}:jobs`. */
export function vantageKeys(prefix: string): VantageKeys {
  return {
    jobs: (vantage) => `{${prefix}v:${vantage}}:jobs`,
    seen: `{${prefix}vantages}:seen`,
    replies: (dispatcher) => `{${prefix}d:${dispatcher}}:replies`,
    reply: (dispatcher, request) => `{${prefix}d:${dispatcher}}:r:${request}`,
  };
}
