import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { redisAvailability, startRedisServer, type RedisServerFixture } from "../../testkit/redis-server.js";
import { type AccessTestService, startTestService } from "../fixtures/service-harness.js";

const redis = redisAvailability();
const CALLS_IN_BUDGET = 60;
const BUDGET = CALLS_IN_BUDGET * 2;
const CONCURRENCY = 10;

describe.skipIf(!redis.available)("Redis stopped and restarted under load", () => {
  let server: RedisServerFixture;
  let targets: HttpTargets;
  let access: AccessTestService;
  const agent = new Agent({ connections: CONCURRENCY });

  beforeAll(async () => {
    server = await startRedisServer();
    targets = await startHttpTargets({ routes: { "/up": { kind: "respond", status: 200 } } });
    access = await startTestService({
      as: "access",
      store: { kind: "redis", url: server.url() },
      storeOptions: { commandTimeoutMs: 500 },
      config: { creditBudget: BUDGET },
    });
  });
  afterAll(async () => {
    await agent.close();
    await access?.close();
    await targets?.close();
    await server?.close();
  });

  it("answers 503 while Redis is away, recovers by itself, and admits exactly the budget", async () => {
    const statuses: number[] = [];
    let stopLoad = false;
    const deadline = Date.now() + 40_000;
    const worker = async () => {
      while (!stopLoad && Date.now() < deadline) {
        const response = await request(`${access.url}/api/v1/is-site-down?url=${encodeURIComponent(targets.url("/up"))}`, {
          dispatcher: agent,
          headers: { "x-api-key": access.key },
        });
        await response.body.dump();
        statuses.push(response.statusCode);
        // Past the budget every call is a 429: a few of them prove the budget is spent, then stop.
        if (statuses.filter((status) => status === 429).length >= CONCURRENCY) stopLoad = true;
      }
    };
    const count = (status: number) => statuses.filter((seen) => seen === status).length;
    const until = async (condition: () => boolean) => {
      while (!condition()) {
        if (Date.now() > deadline) throw new Error(`gave up waiting; statuses so far: ${JSON.stringify(tally(statuses))}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };

    const load = Promise.all(Array.from({ length: CONCURRENCY }, worker));
    await until(() => count(200) >= 15);
    await server.stop();
    await until(() => count(503) >= 20);
    await server.start();
    await load;

    expect(Object.keys(tally(statuses)).sort()).toEqual(["200", "429", "503"]);
    // After the first 503, 200s again: recovery without a restart of the service.
    expect(statuses.lastIndexOf(200)).toBeGreaterThan(statuses.indexOf(503));
    // The ledger holds exactly the budget: nothing admitted beyond it, nothing charged twice.
    expect((await access.store.usage(access.keyId, { budget: BUDGET, windowSeconds: 86_400 })).used).toBe(BUDGET);
    // Every 200 was charged. The converse has one documented exception (docs/credits.md): a charge
    // Redis ran just as it shut down, whose reply was lost, is answered 503 yet stays charged; at
    // most one per connection in flight at that moment, seen once in a loaded CI run (59 of 60).
    expect(count(200)).toBeLessThanOrEqual(CALLS_IN_BUDGET);
    expect(count(200)).toBeGreaterThanOrEqual(CALLS_IN_BUDGET - CONCURRENCY);
  }, 50_000);
});

function tally(statuses: readonly number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const status of statuses) out[status] = (out[status] ?? 0) + 1;
  return out;
}
