import { getEventListeners } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDIRECT_TRACE } from "../../src/shared/limits.js";
import type { Prober } from "../../src/probe/hop-types.js";
import { LATE_START_GRACE_MS } from "../../src/probe/overload.js";
import { sharedClockMs } from "../../src/probe/clock.js";
import { startTraceTarget, type TraceTarget } from "../fixtures/trace-targets.js";
import { traceEnv, traceResult as trace, loopbackProber, traceRedirects } from "../fixtures/test-env.js";

let site: TraceTarget;
let prober: Prober;

beforeAll(async () => {
  site = await startTraceTarget();
  prober = loopbackProber();
});

afterAll(async () => {
  await prober.close();
  await site.close();
});

describe("timeouts", () => {
  it("ends as Timeout with the partial chain when a hop never answers", async () => {
    site.route("/to-silence", { kind: "redirect", status: 301, location: "/silence" });
    site.route("/silence", { kind: "silent" });
    const result = await trace(site.url("/to-silence"), traceEnv(prober, { tracePorts: [site.port], traceHopTimeoutMs: 400 }));
    expect(result).toMatchObject({ chainStatus: "timeout", redirects: 1, finalUrl: site.url("/silence"), finalStatus: null });
    expect(result.chain.map((hop) => hop.url)).toEqual([site.url("/to-silence")]);
    expect(result.warnings).toEqual([
      { code: "hop_timeout", message: `HEAD ${site.url("/silence")} got no response within 400 ms`, hop: null, severity: "problem" },
    ]);
    // Timing fidelity, generous: the 400 ms timeout, not the 1.5 s budget, ended it.
    expect(result.totalTimeMs).toBeGreaterThanOrEqual(380);
    expect(result.totalTimeMs).toBeLessThan(1_400);
  });

  it("waits the default 3 s per request, then returns the partial chain", async () => {
    site.route("/before-silence", { kind: "redirect", status: 301, location: "/silent-default" });
    site.route("/silent-default", { kind: "silent" });
    const env = traceEnv(prober, {
      tracePorts: [site.port],
      traceHopTimeoutMs: REDIRECT_TRACE.hopTimeoutMs,
      traceTotalTimeoutMs: REDIRECT_TRACE.totalTimeoutMs,
    });
    const result = await trace(site.url("/before-silence"), env);
    expect(result).toMatchObject({ chainStatus: "timeout", redirects: 1, finalUrl: site.url("/silent-default"), finalStatus: null });
    expect(result.chain.map((hop) => hop.url)).toEqual([site.url("/before-silence")]);
    expect(result.warnings).toEqual([
      {
        code: "hop_timeout",
        message: `HEAD ${site.url("/silent-default")} got no response within 3000 ms`,
        hop: null,
        severity: "problem",
      },
    ]);
    expect(result.totalTimeMs).toBeGreaterThanOrEqual(2_950);
    expect(result.totalTimeMs).toBeLessThan(6_000);
  });

  it("ends a chain of slow hops when the whole-trace budget is spent", async () => {
    for (let index = 1; index <= 10; index++) {
      site.route(`/slow/${index}`, { kind: "slow", delayMs: 400, then: { kind: "redirect", status: 302, location: `/slow/${index + 1}` } });
    }
    const env = traceEnv(prober, { tracePorts: [site.port], traceHopTimeoutMs: 700, traceTotalTimeoutMs: 1_500 });
    const result = await trace(site.url("/slow/1"), env);
    // Each hop takes ~400 ms, well inside its 700 ms; the fourth is cut by the 1.5 s budget.
    expect(result).toMatchObject({ chainStatus: "timeout", redirects: 3, finalUrl: site.url("/slow/4"), finalStatus: null });
    expect(result.chain).toHaveLength(3);
    expect(result.warnings.filter((warning) => warning.code !== "temporary_redirect")).toEqual([
      {
        code: "trace_timeout",
        message: `The trace used its 1500 ms budget while requesting ${site.url("/slow/4")} (HEAD)`,
        hop: null,
        severity: "problem",
      },
    ]);
    expect(result.totalTimeMs).toBeGreaterThanOrEqual(1_450);
    expect(result.totalTimeMs).toBeLessThan(2_500);
  });

  it("our own delay between requests is not the target's: slow work between hops still leaves the target its whole budget", async () => {
    for (let index = 1; index <= 10; index++) {
      site.route(`/paced/${index}`, {
        kind: "slow",
        delayMs: 400,
        then: { kind: "redirect", status: 302, location: `/paced/${index + 1}` },
      });
    }
    // 400 ms of our own after the first request (as a loaded thread would take). By the wall clock the 1.1 s
    // budget would leave the second hop 300 ms, less than its target's 400; by the target's time on the wire it
    // has its whole 700 ms, and the third gets the last ~300 ms and is cut. Each margin is 250 ms or more, and
    // a busy machine only makes the cut hop answer later.
    const env = traceEnv(delayedAfterHops(prober, 400, 1), {
      tracePorts: [site.port],
      traceHopTimeoutMs: 700,
      traceTotalTimeoutMs: 1_100,
    });
    const started = performance.now();
    const result = await trace(site.url("/paced/1"), env);
    const wallMs = performance.now() - started;
    expect(result).toMatchObject({ chainStatus: "timeout", redirects: 2, finalUrl: site.url("/paced/3"), finalStatus: null });
    expect(result.totalTimeMs).toBeGreaterThanOrEqual(1_050);
    // The trace did run past its budget by the wall clock: the case is the one it says.
    expect(wallMs).toBeGreaterThan(1_100 + 400 - 50);
  });

  it("our own work running past the budget by more than the start grace is overload, not a verdict on the target", async () => {
    site.route("/stalled/1", { kind: "redirect", status: 302, location: "/stalled/2" });
    site.route("/stalled/2", { kind: "redirect", status: 302, location: "/stalled/3" });
    site.route("/stalled/3", { kind: "status", status: 200 });
    const env = traceEnv(delayedAfterHops(prober, 1_000 + LATE_START_GRACE_MS), {
      tracePorts: [site.port],
      traceHopTimeoutMs: 700,
      traceTotalTimeoutMs: 1_000,
    });
    const outcome = await traceRedirects(site.url("/stalled/1"), env);
    expect(outcome).toMatchObject({ kind: "overloaded", overload: { why: "overrun" } });
  });

  it("a trace asked for longer ago than the start grace (timeoutsFrom) is overload, and sends nothing: its budget went on our wait, not on the target", async () => {
    site.route("/asked-long-ago", { kind: "silent" });
    const env = traceEnv(prober, { tracePorts: [site.port], traceHopTimeoutMs: 5_000, traceTotalTimeoutMs: 10_000 });
    const connections = site.connections();
    // Asked for 9.7 s ago with a 10 s budget: before, its hop got the 0.3 s left and the chain was reported as trace_timeout.
    const outcome = await traceRedirects(site.url("/asked-long-ago"), env, undefined, { timeoutsFrom: sharedClockMs() - 9_700 });
    expect(outcome).toMatchObject({ kind: "overloaded", overload: { why: "late_start" } });
    expect(site.connections()).toBe(connections);
  });

  it("a trace asked for within the start grace gets its whole budget from its start: a trace_timeout is the target's own hops using it", async () => {
    site.route("/asked-just-now", { kind: "silent" });
    const env = traceEnv(prober, { tracePorts: [site.port], traceHopTimeoutMs: 5_000, traceTotalTimeoutMs: 1_500 });
    const startedAt = performance.now();
    const outcome = await traceRedirects(site.url("/asked-just-now"), env, undefined, {
      timeoutsFrom: sharedClockMs() - LATE_START_GRACE_MS / 5,
    });
    const waitedMs = performance.now() - startedAt;
    if (outcome.kind !== "result") throw new Error(outcome.kind);
    expect(outcome.result.warnings.map((warning) => warning.code)).toEqual(["trace_timeout"]);
    expect(waitedMs).toBeGreaterThanOrEqual(1_500 - 50);
  });

  it("leaves no listener on the caller's signal once a trace is over (one signal may outlive many traces)", async () => {
    site.route("/listened", { kind: "status", status: 200 });
    const caller = new AbortController();
    const env = traceEnv(prober, { tracePorts: [site.port] });
    for (let index = 0; index < 3; index++) expect((await traceRedirects(site.url("/listened"), env, caller.signal)).kind).toBe("result");
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
  });

  it("stops at once, as cancelled, when the caller's signal aborts", async () => {
    site.route("/cancel-me", { kind: "silent" });
    const controller = new AbortController();
    const env = traceEnv(prober, { tracePorts: [site.port], traceHopTimeoutMs: 5_000, traceTotalTimeoutMs: 10_000 });
    const started = performance.now();
    setTimeout(() => controller.abort(new Error("caller went away")), 200);
    const outcome = await traceRedirects(site.url("/cancel-me"), env, controller.signal);
    expect(outcome).toMatchObject({ kind: "cancelled" });
    expect(performance.now() - started).toBeLessThan(3_000);
  });
});

/** The prober, with `ms` of waiting after each of its first `requests` requests ends: work of ours between requests, not time on the wire. */
function delayedAfterHops(inner: Prober, ms: number, requests = Number.POSITIVE_INFINITY): Prober {
  let ended = 0;
  return {
    screen: (url, ports) => inner.screen(url, ports),
    hop: async (request) => {
      const outcome = await inner.hop(request);
      ended += 1;
      if (ended <= requests) await new Promise((resolve) => setTimeout(resolve, ms));
      return outcome;
    },
    tlsVersions: (request) => inner.tlsVersions(request),
    close: () => Promise.resolve(),
  };
}
