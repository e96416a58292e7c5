import type { Registry } from "prom-client";
import type { Config } from "../config.js";
import type { DiagnosticRunner } from "../runner/diagnostic-runner.js";
import type { RedisFanout } from "./redis/redis-fanout.js";

// The engine is reached only through this file (the layer test): what the CLI holds of it is named here.
export type { RedisFanout };

/**
 * The vantage engine of a `serve` on a Redis store: a worker of its vantage
 * (SITEDIAG_VANTAGE) that can also send jobs to every other. Undefined on a
 * SQLite store, where the one vantage is this instance. Loaded only for
 * Redis, as the store is: a SQLite deployment never loads ioredis.
 */
export async function redisFanoutFromConfig(
  config: Config,
  runner: Pick<DiagnosticRunner, "checkSite" | "traceRedirects">,
  registry: Registry,
  onTrouble: (error: unknown, where: string) => void,
): Promise<RedisFanout | undefined> {
  const { store, vantage } = config;
  if (store.kind === "sqlite") return undefined;
  const { createRedisFanout } = await import("./redis/redis-fanout.js");
  return createRedisFanout({
    location: store,
    self: { name: vantage.name, label: vantage.label, location: vantage.location, version: vantage.version },
    runner,
    maxJobs: vantage.maxJobs,
    timing: { forgetAfterMs: vantage.forgetAfterMs },
    registry,
    onTrouble,
  });
}

/**
 * An asker only, for the command line on a Redis store: it sends jobs to the
 * vantages and reads their answers, but runs no worker (no runner: it joins
 * no consumer group, takes no job) and announces nothing (no heartbeat), so
 * the deployment never counts on a terminal that is about to exit. Rejects,
 * naming the last connection error, when the Redis cannot be reached.
 */
export async function redisAskerFromConfig(
  config: Config,
  onTrouble: (error: unknown, where: string) => void,
): Promise<RedisFanout | undefined> {
  const { store, vantage } = config;
  if (store.kind === "sqlite") return undefined;
  const { createRedisFanout } = await import("./redis/redis-fanout.js");
  return createRedisFanout({
    location: store,
    self: { name: vantage.name, label: vantage.label, location: vantage.location, version: vantage.version },
    maxJobs: vantage.maxJobs,
    timing: { forgetAfterMs: vantage.forgetAfterMs },
    onTrouble,
  });
}
