import type { Interceptor } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdmission } from "../../src/server/admission/admission.js";
import { createInflightLimit } from "../../src/server/admission/inflight-limit.js";
import { createProbeQueue } from "../../src/server/admission/probe-queue.js";
import { attachCallRecord, type CallRecord } from "../../src/server/observers/call-record.js";
import { sharedClockMs } from "../../src/probe/shared-clock.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { manualLoad } from "../fixtures/manual-load.js";
import { type TestService, startTestService } from "../fixtures/service-harness.js";

/**
 * A caller told "6 s per request" hears at 6 s after asking: the time the
 * service takes to take a call in (key, charge) comes out of the first
 * request's timeout, the time it holds a check back for a turn on the probe
 * threads does not (service/timeouts-from.ts).
 */
const SITE_TIMEOUT_MS = 2_000;
const INTAKE_DELAY_MS = 1_200;

/** Stands where the access interceptor stands, and takes as long as a slow charge would. */
const slowIntake: Interceptor = (next) => async (request) => {
  await new Promise((resolve) => setTimeout(resolve, INTAKE_DELAY_MS));
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

  it("answers a silent site at the timeout after the call arrived, not after its slow intake", async () => {
    const started = performance.now();
    const response = await fetch(`${service.url}/api/v1/is-site-down?details=true&url=${encodeURIComponent(targets.url("/never"))}`);
    const waitedMs = performance.now() - started;
    const body = (await response.json()) as { data: { reason: string; details: { requests: { failure: { elapsedMs: number; timedOut: boolean } }[] } } };

    expect(response.status).toBe(200);
    expect(body.data.reason).toBe("Timed out after 2 s waiting for a response");
    const failure = body.data.details.requests[0]?.failure;
    expect(failure?.timedOut).toBe(true);
    // The request itself had what was left of the 2 s after the 1.2 s intake.
    expect(failure?.elapsedMs).toBeLessThan(SITE_TIMEOUT_MS - INTAKE_DELAY_MS / 2);
    // Before: intake + a full timeout, 3.2 s.
    expect(waitedMs).toBeLessThan(SITE_TIMEOUT_MS + INTAKE_DELAY_MS / 2);
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
