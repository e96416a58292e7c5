import type { Interceptor } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdmission } from "../../src/server/admission/admission.js";
import { createInflightLimit } from "../../src/server/admission/inflight-limit.js";
import { createProbeQueue } from "../../src/server/admission/probe-queue.js";
import { attachCallRecord, type CallRecord } from "../../src/server/observers/call-record.js";
import { LATE_START_GRACE_MS } from "../../src/probe/overload.js";
import { sharedClockMs } from "../../src/probe/clock.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { manualLoad } from "../fixtures/manual-load.js";
import { type TestService, startTestService } from "../fixtures/service-harness.js";

/**
 * A call's timeouts count from its arrival (service/timeouts-from.ts), and a
 * target is judged only on its full time: a call whose intake (key, charge)
 * took longer than the start grace is answered as overload, before anything
 * is sent; one taken in within it gives its first request the whole timeout.
 */
const SITE_TIMEOUT_MS = 2_000;
/** How long the stand-in for the access interceptor takes, set by each test. */
let intakeDelayMs = 0;

/** Stands where the access interceptor stands, and takes as long as a slow charge would. */
const slowIntake: Interceptor = (next) => async (request) => {
  await new Promise((resolve) => setTimeout(resolve, intakeDelayMs));
  return next(request);
};

describe("a call's timeouts start at its arrival", () => {
  let targets: HttpTargets;
  let service: TestService;

  beforeAll(async () => {
    targets = await startHttpTargets({ routes: { "/never": { kind: "hang" } } });
    service = await startTestService({ config: { siteTimeoutMs: SITE_TIMEOUT_MS }, interceptors: [slowIntake] });
  });

  afterAll(async () => {
    await service.close();
    await targets.close();
  });

  const check = () => fetch(`${service.url}/api/v1/is-site-down?details=true&url=${encodeURIComponent(targets.url("/never"))}`);

  it("answers a call whose intake outlasted the start grace with 503 and Retry-After, sending nothing to the site", async () => {
    intakeDelayMs = LATE_START_GRACE_MS + 200;
    const before = targets.requests.length;
    const response = await check();
    // Before: 200, "Timed out after 2 s", though the site had had 0.8 s.
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unavailable");
    expect(targets.requests).toHaveLength(before);
  });

  it("gives a call taken in within the grace its full timeout on the wire", async () => {
    intakeDelayMs = LATE_START_GRACE_MS / 5;
    const response = await check();
    const body = (await response.json()) as { data: { reason: string; details: { requests: { failure: { elapsedMs: number; timedOut: boolean } }[] } } };
    expect(response.status).toBe(200);
    expect(body.data.reason).toBe("Timed out after 2 s waiting for a response");
    const failure = body.data.details.requests[0]?.failure;
    expect(failure?.timedOut).toBe(true);
    expect(failure?.elapsedMs).toBeGreaterThanOrEqual(SITE_TIMEOUT_MS - 50);
  });
});

describe("admission", () => {
  it("restarts a call's timeouts when it waited for a turn on the probe threads, and not when it went on at once", async () => {
    const manual = manualLoad();
    const admission = createAdmission(createInflightLimit({ max: 10 }), () => Promise.resolve(null), createProbeQueue({ load: manual.load, max: 10, maxWaitMs: 60_000 }));
    const arrivedAt = sharedClockMs() - 5_000;
    const record = (): CallRecord => ({ requestId: "r", startedAt: 0n, door: undefined, operation: undefined, outcome: undefined, target: null, timeoutsFrom: arrivedAt });

    const atOnce = { record: record() };
    attachCallRecord(atOnce, atOnce.record);
    const passed = await admission.admit(atOnce, "rest", "CheckSite", "key");
    expect(passed.ok).toBe(true);
    expect(atOnce.record.timeoutsFrom).toBe(arrivedAt);

    const waiting = { record: record() };
    attachCallRecord(waiting, waiting.record);
    manual.report(true);
    const admitted = admission.admit(waiting, "rest", "CheckSite", "key");
    await new Promise((resolve) => setImmediate(resolve));
    manual.report(false);
    expect((await admitted).ok).toBe(true);
    expect(waiting.record.timeoutsFrom).toBeGreaterThan(arrivedAt + 4_000);
  });
});
