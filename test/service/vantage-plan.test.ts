import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server/start-server.js";
import { loadConfig } from "../../src/config.js";
import { createLocalFanout, LOCAL_VANTAGE } from "../../src/vantage/local-fanout.js";
import { createVantagePlanner } from "../../src/service/vantage-plan.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { createTestEnv, runnerOf, type TestEnv } from "../fixtures/test-env.js";

// vantages=all when no vantage is live (the instance is stopping): never the
// plain call in its place, and nothing to charge.

let targets: HttpTargets;
let env: TestEnv;
let server: RunningServer;

beforeAll(async () => {
  targets = await startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 } } });
  env = createTestEnv();
  const runner = runnerOf(env);
  const fanout = createLocalFanout({ info: LOCAL_VANTAGE, runner });
  await fanout.close();
  server = await startServer({
    config: { ...loadConfig({}), host: "127.0.0.1", port: 0 },
    runner,
    vantages: { fanout },
    interceptors: [createVantagePlanner(fanout)],
    shutdownGraceMs: 1_000,
  });
});

afterAll(async () => {
  await server?.close();
  await env?.close();
  await targets?.close();
});

describe("the vantage planner", () => {
  it("answers all with no live vantage as retryable unavailable, not as a plain check", async () => {
    const response = await fetch(
      `${server.url}/api/v1/is-site-down?${new URLSearchParams({ url: targets.url("/ok"), vantages: "all" }).toString()}`,
    );
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unavailable");
  });

  it("lets a named vantage through: its entry says it has no live instance", async () => {
    const response = await fetch(
      `${server.url}/api/v1/is-site-down?${new URLSearchParams({ url: targets.url("/ok"), vantages: "local" }).toString()}`,
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { vantages: { verdict: string; entries: { vantage: { code: string } }[] } } };
    expect(body.data.vantages.verdict).toBe("unavailable");
    expect(body.data.vantages.entries[0]?.vantage.code).toBe("no_live_instance");
  });
});
