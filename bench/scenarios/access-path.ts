import { redisAvailability, startRedisServer } from "../../testkit/redis-server.js";
import type { Figure } from "../results.js";
import type { ServiceProcess } from "../service-process.js";
import type { BenchStack } from "../stack.js";
import { median } from "../stats.js";
import { type LoadResult, runWrk } from "../wrk.js";

interface Variant {
  readonly label: string;
  readonly service: ServiceProcess;
  readonly serial: LoadResult[];
  readonly loaded: LoadResult[];
}

/**
 * Scenario 7: what the key check and the credit charge add to a request. The
 * same direct-200 check runs against three fresh servers: one with no access
 * layer (bench/bare-service.ts), `sitediag serve` on SQLite, and on Redis.
 * At concurrency 1 the p50 difference is the added latency; at the bench's
 * concurrency the throughput difference is the added cost.
 */
export async function runAccessPath(stack: BenchStack): Promise<Figure[]> {
  const { options } = stack;
  const seconds = Math.min(options.durationSeconds, 3);
  const redisReady = redisAvailability().available;
  const redis = redisReady ? await startRedisServer() : null;
  const started: ServiceProcess[] = [];
  try {
    const launch = async (name: string, setup: Parameters<BenchStack["startService"]>[1]) => {
      const service = await stack.startService(name, setup);
      started.push(service);
      return service;
    };
    const variants: Variant[] = [
      { label: "no access layer", service: await launch("bare", { withAccess: false }), serial: [], loaded: [] },
      { label: "SQLite", service: await launch("access-sqlite", {}), serial: [], loaded: [] },
    ];
    if (redis !== null)
      variants.push({ label: "Redis", service: await launch("access-redis", { store: redis.url() }), serial: [], loaded: [] });

    const target = encodeURIComponent(stack.target.url("/ok"));
    const run = (variant: Variant, connections: number, duration: number) =>
      runWrk({
        url: `${variant.service.url}/api/v1/is-site-down?url=${target}`,
        headers: variant.service.apiKey === "" ? {} : { "x-api-key": variant.service.apiKey },
        connections,
        durationSeconds: duration,
      });
    for (const variant of variants) await run(variant, options.concurrency, 1);
    for (let round = 0; round < options.rounds; round++) {
      // Rotate the order each round, so no variant always runs first on a warming machine.
      const order = variants.map((_, index) => variants[(index + round) % variants.length] as Variant);
      for (const variant of order) {
        variant.serial.push(await run(variant, 1, seconds));
        variant.loaded.push(await run(variant, options.concurrency, seconds));
      }
    }

    const bare = variants[0] as Variant;
    const p50 = (variant: Variant) => median(variant.serial.map((result) => result.p50Ms));
    const figures: Figure[] = [];
    for (const variant of variants) {
      figures.push({
        scenario: 7,
        name: `access path, ${variant.label}: p50 at concurrency 1`,
        unit: "ms",
        sitediag: p50(variant),
        blackbox: null,
      });
      figures.push({
        scenario: 7,
        name: `access path, ${variant.label}: checks/s at concurrency ${options.concurrency}`,
        unit: "/s",
        sitediag: median(variant.loaded.map((result) => result.perSecond)),
        blackbox: null,
      });
    }
    for (const variant of variants.slice(1)) {
      figures.push({
        scenario: 7,
        name: `access path: added p50 latency, ${variant.label}`,
        unit: "ms",
        sitediag: p50(variant) - p50(bare),
        blackbox: null,
      });
    }
    if (redis === null) console.warn("scenario 7: redis-server is not installed; the Redis variant was skipped");
    return figures;
  } finally {
    for (const service of started) await service.stop();
    await redis?.close();
  }
}
