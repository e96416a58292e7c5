import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/access/open-store.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type RedisClusterFixture, startRedisCluster } from "../fixtures/redis-cluster.js";
import { redisAvailability } from "../../testkit/redis-server.js";
import { until } from "../fixtures/until.js";
import { newKey } from "../fixtures/store-harness.js";
import { sitediagArgs } from "../fixtures/built-sitediag.js";

// Two real `sitediag serve` processes on one Redis Cluster (three masters, each
// with a replica): between them one exact budget, and a failover of the master
// holding the key's slot loses no committed charge, with no restart.
const ROOT = join(import.meta.dirname, "../..");
const availability = redisAvailability();
const DAY = { windowSeconds: 86_400 };

function serve(env: Record<string, string>): { child: ChildProcess; url: Promise<string> } {
  const child = spawn(process.execPath, sitediagArgs("serve"), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "warn", HOST: "127.0.0.1", PORT: "0", SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr?.resume();
  return { child, url: until(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1]) };
}

describe.skipIf(!availability.available)("sitediag on a Redis Cluster", () => {
  let cluster: RedisClusterFixture;
  let targets: HttpTargets;
  const children: ChildProcess[] = [];
  let urls: string[] = [];
  const budget = 1_000;

  beforeAll(async () => {
    [cluster, targets] = await Promise.all([
      startRedisCluster(),
      startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 } } }),
    ]);
    const env = { SITEDIAG_STORE: `redis+cluster://${cluster.seeds}`, SITEDIAG_CREDIT_BUDGET: String(budget) };
    const started = [serve(env), serve(env)];
    children.push(...started.map((instance) => instance.child));
    urls = await Promise.all(started.map((instance) => instance.url));
  }, 90_000);

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    await targets?.close();
    await cluster?.close();
  });

  async function check(url: string, key: string): Promise<number> {
    const response = await fetch(`${url}/api/v1/is-site-down?url=${encodeURIComponent(targets.url("/ok"))}`, {
      headers: { "x-api-key": key },
    });
    await response.arrayBuffer();
    return response.status;
  }

  it("two instances admit exactly one budget between them", async () => {
    const store = await openStore({ kind: "redis-cluster", nodes: cluster.nodes, password: undefined });
    const key = await newKey(store, "shared");
    await store.setKeyBudget(key.record.id, 100);
    // A 503 is an instance turning a call away for its own load (a busy machine: nothing charged, the answer says
    // so); the client calls again, as the 503's Retry-After asks, until each of the 80 calls is a verdict or a 429.
    const answered: number[] = [];
    let waiting = 80;
    for (let round = 0; waiting > 0 && round < 20; round++) {
      const statuses = await Promise.all(Array.from({ length: waiting }, (_, index) => check(urls[index % 2] ?? "", key.secret)));
      answered.push(...statuses.filter((status) => status !== 503));
      waiting = 80 - answered.length;
      if (waiting > 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    expect(answered).toHaveLength(80);
    expect(answered.filter((status) => status === 200)).toHaveLength(50);
    expect(answered.filter((status) => status === 429)).toHaveLength(30);
    expect((await store.usage(key.record.id, { budget, ...DAY })).used).toBe(100);
    await store.close();
  }, 60_000);

  it("a failover of the master holding the key's slot loses no committed charge, and service resumes without a restart", async () => {
    const store = await openStore({ kind: "redis-cluster", nodes: cluster.nodes, password: undefined });
    const key = await newKey(store, "failover");
    const statuses: number[] = [];
    let charging = true;
    // Calls keep coming from both instances while the slot's master hands over to its replica.
    const load = (async () => {
      for (let round = 0; charging && round < 2_000; round++)
        statuses.push(...(await Promise.all(urls.map((url) => check(url, key.secret)))));
    })();
    await until(() => (statuses.length >= 20 ? true : undefined), 20_000);
    const moved = await cluster.failoverFor(`sitediag:key:{${key.record.id}}`);
    expect(moved.to).not.toBe(moved.from);
    // Service resumes by itself: calls answered after the failover are admitted again.
    const afterFailover = statuses.length;
    await until(() => (statuses.slice(afterFailover).filter((status) => status === 200).length >= 10 ? true : undefined), 20_000);
    charging = false;
    await load;

    // Only 200 (charged) or 503 (could not decide, charged nothing): never a wrong answer.
    expect(statuses.every((status) => status === 200 || status === 503)).toBe(true);
    const admitted = statuses.filter((status) => status === 200).length;
    expect((await store.usage(key.record.id, { budget, ...DAY })).used).toBe(admitted * 2);
    await store.close();
  }, 90_000);
});
