import { afterAll, beforeAll, expect, it } from "vitest";
import type { DiagnosticLimits } from "../../src/diagnostics/diagnostic-env.js";
import { threadedDiagnostics } from "../../src/diagnostics/threaded-diagnostics.js";
import { createThreadedProber, type ThreadedProber } from "../../src/probe/threaded-prober.js";
import { USER_AGENT } from "../../src/version.js";
import type { HoldJob } from "../fixtures/holding-diagnostic-thread.js";
import { startRawTarget } from "../fixtures/raw-targets.js";
import { startTraceTarget, type TraceTarget } from "../fixtures/trace-targets.js";
import { until } from "../fixtures/until.js";
import { LOOPBACK_CIDRS } from "../fixtures/test-env.js";

// One thread, so the held thread is the one each diagnostic goes to.
let prober: ThreadedProber;
let site: TraceTarget;

beforeAll(async () => {
  site = await startTraceTarget();
  site.route("/silent", { kind: "silent" });
  const entry = new URL("../fixtures/holding-diagnostic-thread.ts", import.meta.url);
  prober = createThreadedProber({ allowCidrs: LOOPBACK_CIDRS, dnsServers: [], userAgent: USER_AGENT }, { threads: 1, maxLoopDelayMs: 1_000, entry });
  await prober.ready();
}, 30_000);

afterAll(async () => {
  await prober.close();
  await site.close();
});

const HOLD_MS = 2_000;
const hold: HoldJob = { holdMs: HOLD_MS };
const limits = (overrides: Partial<DiagnosticLimits>): DiagnosticLimits => ({
  siteTimeoutMs: 6_000,
  traceHopTimeoutMs: 5_000,
  traceTotalTimeoutMs: 10_000,
  tracePorts: [site.port],
  ...overrides,
});

// Counted from the start on the thread, each would end a full timeout after the hold (3.5 s); counted from the call, at the hold's end.
/** Holds the one thread, then makes the call (it waits behind the hold); how long the call took from when it was made. */
async function behindHold<T>(call: () => Promise<T>): Promise<{ readonly outcome: T; readonly elapsedMs: number }> {
  const calledAt = performance.now();
  const held = prober.run(hold);
  const outcome = await call();
  const elapsedMs = performance.now() - calledAt;
  await held;
  return { outcome, elapsedMs };
}

it("counts a trace's whole budget from the call when its thread is busy, not from when the thread starts it", async () => {
  const diagnostics = threadedDiagnostics(prober);
  const { outcome, elapsedMs } = await behindHold(() => diagnostics.traceRedirects(site.url("/silent"), limits({ traceTotalTimeoutMs: 1_500 }), undefined, {}));
  if (outcome.kind !== "result") throw new Error(outcome.kind);
  expect(outcome.result.chainStatus).toBe("timeout");
  expect(outcome.result.warnings.map((warning) => warning.code)).toEqual(["trace_timeout"]);
  expect(elapsedMs).toBeGreaterThanOrEqual(HOLD_MS - 50);
  expect(elapsedMs).toBeLessThan(HOLD_MS + 1_000);
}, 20_000);

it("counts a site check's first request timeout from the call when its thread is busy", async () => {
  const diagnostics = threadedDiagnostics(prober);
  const { outcome, elapsedMs } = await behindHold(() => diagnostics.checkSite(site.url("/silent"), limits({ siteTimeoutMs: 1_500 }), undefined, {}));
  if (outcome.kind !== "result") throw new Error(outcome.kind);
  // The deadline had passed when the thread got to it: the dial is cut at once, and the answer is the contract's sentence for it.
  expect(outcome.result).toMatchObject({ status: "down", failedStage: "connect", reason: "Timed out after 1.5 s connecting to the server" });
  expect(elapsedMs).toBeGreaterThanOrEqual(HOLD_MS - 50);
  expect(elapsedMs).toBeLessThan(HOLD_MS + 1_000);
}, 20_000);

it("a caller's cancel reaches its diagnostic on the thread: the request in flight is closed there, not left to its timeout", async () => {
  const target = await startRawTarget({ kind: "silent" });
  try {
    const diagnostics = threadedDiagnostics(prober);
    const caller = new AbortController();
    const reason = new Error("client went away");
    const pending = diagnostics.checkSite(target.url, limits({ siteTimeoutMs: 6_000 }), caller.signal, {});
    await until(() => (target.connections() === 1 ? true : undefined), 5_000);
    const abortedAt = performance.now();
    caller.abort(reason);
    expect(await pending).toEqual({ kind: "cancelled", reason });
    // The 6 s request timeout would close it much later; the cancel message closes it at once.
    await until(() => (target.open() === 0 ? true : undefined), 3_000, 5);
    expect(performance.now() - abortedAt).toBeLessThan(2_000);
  } finally {
    await target.close();
  }
}, 20_000);
