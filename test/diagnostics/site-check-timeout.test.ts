import { afterAll, beforeAll, expect, it } from "vitest";
import { SITE_CHECK } from "../../src/shared/limits.js";
import { LATE_START_GRACE_MS } from "../../src/probe/overload.js";
import { sharedClockMs } from "../../src/probe/clock.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type TestEnv, createTestEnv, checkSite } from "../fixtures/test-env.js";

// The one test at the contract's own timeout (spec §4.1 behaviour 2: six seconds).
let targets: HttpTargets;
let env: TestEnv;

beforeAll(async () => {
  targets = await startHttpTargets({ routes: { "/never": { kind: "hang" } } });
  env = createTestEnv();
});

afterAll(async () => {
  await env.close();
  await targets.close();
});

it("gives up on a target that never answers after the default six seconds", { timeout: 20_000 }, async () => {
  expect(env.siteTimeoutMs).toBe(SITE_CHECK.requestTimeoutMs);
  expect(SITE_CHECK.requestTimeoutMs).toBe(6_000);
  const startedAt = performance.now();
  const outcome = await checkSite(targets.url("/never"), env);
  const waitedMs = performance.now() - startedAt;

  expect(outcome).toMatchObject({
    kind: "result",
    result: {
      finalUrl: null,
      status: "down",
      statusCode: null,
      statusText: null,
      responseTime: null,
      reason: "Timed out after 6 s waiting for a response",
      failedStage: "http",
      redirectHops: null,
    },
  });
  // Fidelity, not performance: the wait is the timeout, give or take scheduling.
  expect(waitedMs).toBeGreaterThanOrEqual(5_900);
  expect(waitedMs).toBeLessThan(9_000);
  expect(targets.requests).toHaveLength(1);
});

it("a call that took the service longer than the start grace to take in (timeoutsFrom) is overload, and nothing is sent to the target", async () => {
  const before = targets.requests.length;
  // Before, its first request got the 2 s left of six, and the site was reported "Timed out after 6 s".
  const outcome = await checkSite(targets.url("/never"), env, undefined, { timeoutsFrom: sharedClockMs() - 4_000 });
  expect(outcome).toMatchObject({ kind: "overloaded", overload: { why: "late_start" } });
  expect(targets.requests).toHaveLength(before);
});

it("a call taken in within the start grace gives its first request the full six seconds from its start", { timeout: 20_000 }, async () => {
  const startedAt = performance.now();
  const outcome = await checkSite(targets.url("/never"), env, undefined, { timeoutsFrom: sharedClockMs() - LATE_START_GRACE_MS / 5 });
  const waitedMs = performance.now() - startedAt;
  expect(outcome).toMatchObject({
    kind: "result",
    result: { status: "down", failedStage: "http", responseTime: null, reason: "Timed out after 6 s waiting for a response" },
  });
  expect(waitedMs).toBeGreaterThanOrEqual(5_900);
  expect(waitedMs).toBeLessThan(9_000);
});
