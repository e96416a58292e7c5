import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type RedisServerFixture, redisAvailability, startRedisServer } from "../../testkit/redis-server.js";
import { until } from "../fixtures/until.js";
import { sitediagArgs } from "../fixtures/built-sitediag.js";

// Two real `sitediag serve` processes behind an imaginary load balancer share one
// Redis: between them they must admit exactly the budget, not a budget each.
const ROOT = join(import.meta.dirname, "../..");
const availability = redisAvailability();

interface Instance {
  readonly url: string;
  readonly child: ChildProcess;
}

function sitediag(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, sitediagArgs(...args), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function collect(child: ChildProcess): { stdout: () => string; exit: Promise<number | null> } {
  let stdout = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr?.resume();
  return { stdout: () => stdout, exit: new Promise((resolve) => child.once("exit", (code) => resolve(code))) };
}

describe.skipIf(!availability.available)("two service instances sharing one Redis", () => {
  let redis: RedisServerFixture;
  let targets: HttpTargets;
  const instances: Instance[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    redis = await startRedisServer();
    // Each answer takes 200 ms, so the calls overlap past the in-flight cap whatever the machine's speed.
    targets = await startHttpTargets({ routes: { "/ok": { kind: "delayed", delayMs: 200, then: { kind: "respond", status: 200 } } } });
    // A small in-flight cap: 200 calls at once are turned away in part (503, Retry-After, nothing charged), as a
    // busy machine's probe queue turns them away, and the budget must still come out exact once they retry.
    env = { SITEDIAG_STORE: redis.url(0), SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8", SITEDIAG_MAX_INFLIGHT: "40", HOST: "127.0.0.1", PORT: "0" };
  }, 60_000);

  afterAll(async () => {
    for (const { child } of instances) if (child.exitCode === null) child.kill("SIGKILL");
    await targets?.close();
    await redis?.close();
  });

  it("admit exactly the shared 300-credit budget between them: 150 checks of 2 credits, then 429s", async () => {
    const created = sitediag(["keys", "create", "--name", "shared"], env);
    const createdOut = collect(created);
    expect(await createdOut.exit).toBe(0);
    const key = createdOut.stdout().trim();
    expect(key).toMatch(/^sd_\w+$/);

    for (let index = 0; index < 2; index += 1) {
      const child = sitediag(["serve"], env);
      const out = collect(child);
      const url = await until(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out.stdout())?.[1]);
      instances.push({ url, child });
    }

    const target = encodeURIComponent(targets.url("/ok"));
    let turnedAway = 0;
    // A client as the 503 asks: wait its Retry-After and call again, until the answer is a verdict or a 429.
    const ask = async (instance: Instance, via: number): Promise<{ status: number; via: number }> => {
      for (;;) {
        const response = await fetch(`${instance.url}/api/v1/is-site-down?url=${target}`, { headers: { "x-api-key": key } });
        await response.arrayBuffer();
        if (response.status !== 503) return { status: response.status, via };
        turnedAway += 1;
        await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get("retry-after") ?? "1") * 1_000));
      }
    };
    const calls = Array.from({ length: 200 }, (_, index) => {
      const instance = instances[index % 2];
      if (instance === undefined) throw new Error("no instance");
      return ask(instance, index % 2);
    });
    const results = await Promise.all(calls);
    expect(turnedAway).toBeGreaterThan(0);

    const admitted = results.filter((result) => result.status === 200);
    const refused = results.filter((result) => result.status === 429);
    expect(admitted).toHaveLength(150);
    expect(refused).toHaveLength(50);
    // Both instances did part of the work: the budget is shared, not split or duplicated.
    expect(new Set(admitted.map((result) => result.via)).size).toBe(2);
    expect(targets.requests.filter((request) => request.target === "/ok")).toHaveLength(150);
  }, 90_000);
});
