import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import type { Interceptor } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdmission, createInflightLimit } from "../../../src/server/admission/admission.js";
import { createProbeQueue } from "../../../src/server/admission/probe-queue.js";
import { type Arrival, arrivalNow, takeIn } from "../../../src/server/door/call-intake.js";
import { requestTargetOf } from "../../../src/server/door/request-target.js";
import { LATE_START_GRACE_MS } from "../../../src/probe/overload.js";
import { sharedClockMs } from "../../../src/probe/clock.js";
import { type HttpTargets, startHttpTargets } from "../../fixtures/http-targets.js";
import { manualLoad } from "../../fixtures/manual-load.js";
import { type TestService, startTestService } from "../../fixtures/service-harness.js";

/**
 * A call's timeouts count from its arrival (Call.timeoutsFrom, service/call.ts), and a
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
    const body = (await response.json()) as {
      data: { reason: string; details: { requests: { failure: { elapsedMs: number; timedOut: boolean } }[] } };
    };
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
    const admission = createAdmission(
      createInflightLimit({ max: 10 }),
      () => Promise.resolve(null),
      createProbeQueue({ load: manual.load, max: 10, maxWaitMs: 60_000 }),
    );
    const arrivedAt = sharedClockMs() - 5_000;
    const arrival = (): Arrival => Object.assign(arrivalNow(requestTargetOf("/"), "r"), { arrivedAt });
    const response = () => new ServerResponse(new IncomingMessage(new Socket()));
    const route = { operation: "CheckSite", tool: "is-site-down", weight: 1 };

    const atOnce = await takeIn(admission, arrival(), response(), "rest", route, "key");
    expect(atOnce.ok).toBe(true);
    expect(atOnce.ok ? atOnce.call.timeoutsFrom : undefined).toBe(arrivedAt);

    manual.report(true);
    const waiting = takeIn(admission, arrival(), response(), "rest", route, "key");
    await new Promise((resolve) => setImmediate(resolve));
    manual.report(false);
    const admitted = await waiting;
    expect(admitted.ok).toBe(true);
    expect(admitted.ok ? admitted.call.timeoutsFrom : undefined).toBeGreaterThan(arrivedAt + 4_000);
  });
});
