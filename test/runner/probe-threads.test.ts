import { once } from "node:events";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticLimits } from "../../src/diagnostics/diagnostic-call.js";
import { sharedClockMs } from "../../src/probe/clock.js";
import { createProbeThreads, type ProbeThreads, type ThreadExit } from "../../src/runner/probe-threads.js";
import { createThreadedRunner, type ThreadedRunner } from "../../src/runner/threaded-runner.js";
import { USER_AGENT } from "../../src/package-info.js";
import { startRawTarget, type RawTarget } from "../fixtures/raw-targets.js";
import { until } from "../fixtures/until.js";

/** Accepts, reads, never answers; remembers which of its connections the other side closed. */
async function startSilentTarget(): Promise<{ url: string; accepted: () => number; closed: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  let closed = 0;
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.resume();
    socket.on("error", () => undefined);
    socket.on("close", () => {
      closed++;
      sockets.delete(socket);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    accepted: () => accepted,
    closed: () => closed,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, "close");
    },
  };
}

const OPTIONS = { allowCidrs: ["127.0.0.0/8"], dnsServers: [], userAgent: USER_AGENT };
/** Each check's request may take 10 s unless a test says otherwise. */
const LIMITS: DiagnosticLimits = { siteTimeoutMs: 10_000, traceHopTimeoutMs: 10_000, traceTotalTimeoutMs: 30_000, tracePorts: [80, 443] };
const runnerOn = (threads: ProbeThreads, limits: Partial<DiagnosticLimits> = {}): ThreadedRunner =>
  createThreadedRunner(threads, Object.assign({}, LIMITS, limits));

let ok: RawTarget;

beforeAll(async () => {
  ok = await startRawTarget({ kind: "delayed", delayMs: 0 });
});

afterAll(async () => {
  await ok.close();
});

describe("diagnostics on probe threads", () => {
  let threads: ProbeThreads;
  let runner: ThreadedRunner;
  const exits: ThreadExit[] = [];

  beforeAll(async () => {
    threads = createProbeThreads(OPTIONS, { threads: 2, maxLoopDelayMs: 1_000, onThreadExit: (exit) => exits.push(exit) });
    runner = runnerOn(threads);
    // A check sent while its thread boots (seconds from source on a busy machine) would wait for it, past its start grace.
    await threads.ready();
  });

  afterAll(async () => {
    await runner.close();
  });

  it("answers a check with its outcome as plain data, its time read on the thread", async () => {
    const calledAt = performance.now();
    const outcome = await runner.checkSite(ok.url, undefined, {});
    const elapsedMs = performance.now() - calledAt;
    expect(outcome.kind).toBe("result");
    if (outcome.kind !== "result") return;
    expect(outcome.result).toMatchObject({ requestedUrl: ok.url, finalUrl: ok.url, status: "up", statusCode: 200 });
    // The sum of the requests' spans, read on the thread on the clock every thread shares: within the call's own time.
    expect(outcome.result.responseTime).toBeGreaterThanOrEqual(0);
    expect(outcome.result.responseTime).toBeLessThanOrEqual(Math.ceil(elapsedMs));
  });

  it("answers every check of a burst larger than a thread starts in one turn, each with its own outcome", async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, (_, index) => runner.checkSite(`${ok.url}burst/${index}`, undefined, {})),
    );
    expect(outcomes.map((outcome) => (outcome.kind === "result" ? outcome.result.finalUrl : outcome.kind))).toEqual(
      Array.from({ length: 50 }, (_, index) => `${ok.url}burst/${index}`),
    );
  });

  it("screens on the thread, with the same policy", async () => {
    expect(await runner.checkSite("http://10.0.0.1/", undefined, {})).toMatchObject({
      kind: "refused",
      refusal: { rule: "non_public_address" },
    });
  });

  it("a caller's abort reaches the thread: the target sees its connection closed and the check ends as cancelled", async () => {
    const silent = await startSilentTarget();
    try {
      const caller = new AbortController();
      const check = runner.checkSite(silent.url, caller.signal, {});
      await until(() => (silent.accepted() === 1 ? true : undefined));
      caller.abort(new Error("caller gone"));
      const outcome = await check;
      expect(outcome.kind).toBe("cancelled");
      await until(() => (silent.closed() === 1 ? true : undefined));
    } finally {
      await silent.close();
    }
  });

  it("one signal over several checks: an abort ends every check in flight under it, after earlier checks answered under it", async () => {
    const silent = await startSilentTarget();
    try {
      const caller = new AbortController();
      // Answered and settled first, as a batch's earlier items are.
      expect((await runner.checkSite(ok.url, caller.signal, {})).kind).toBe("result");
      const long = runnerOn(threads, { siteTimeoutMs: 60_000 });
      const checks = [long.checkSite(silent.url, caller.signal, {}), long.checkSite(silent.url, caller.signal, {})];
      await until(() => (silent.accepted() === 2 ? true : undefined));
      caller.abort(new Error("caller gone"));
      expect((await Promise.all(checks)).map((outcome) => outcome.kind)).toEqual(["cancelled", "cancelled"]);
      await until(() => (silent.closed() === 2 ? true : undefined));
    } finally {
      await silent.close();
    }
  });

  it("a signal already aborted still sends the check, which ends at once without waiting for its timeout", async () => {
    const silent = await startSilentTarget();
    try {
      const outcome = await runnerOn(threads, { siteTimeoutMs: 60_000 }).checkSite(silent.url, AbortSignal.abort(new Error("already")), {});
      expect(outcome.kind).toBe("cancelled");
    } finally {
      await silent.close();
    }
  });

  it("a check that waited to start longer than the grace is overload, decided before anything is sent: the target is not blamed for our delay", async () => {
    const silent = await startSilentTarget();
    try {
      // Asked for 29.8 s ago with a 30 s timeout: before, it was sent with 0.2 s left and reported as the target's timeout.
      const outcome = await runnerOn(threads, { siteTimeoutMs: 30_000 }).checkSite(silent.url, undefined, {
        timeoutsFrom: sharedClockMs() - 29_800,
      });
      expect(outcome).toMatchObject({ kind: "overloaded", overload: { why: "late_start" } });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(silent.accepted()).toBe(0);
    } finally {
      await silent.close();
    }
  });

  it("starts each thread with a small nursery (8 MiB young generation): its garbage is short-lived", async () => {
    await threads.ready();
    for (const thread of threads.workers()) expect(thread.resourceLimits?.maxYoungGenerationSizeMb).toBe(8);
  });

  it("reports each thread's loop delay", async () => {
    const reports = await until(() => {
      const delays = threads.load.loopDelays();
      return delays.length === 2 ? delays : undefined;
    });
    expect(reports.map((report) => report.thread).sort()).toEqual([0, 1]);
    for (const report of reports) {
      expect(report.p99Ms).toBeGreaterThanOrEqual(report.p50Ms);
      expect(report.maxMs).toBeGreaterThanOrEqual(0);
    }
    expect(threads.load.congested()).toBe(false);
  });

  it("a thread that dies ends its checks in flight as overload (no verdict on the target), and is replaced", async () => {
    const silent = await startSilentTarget();
    try {
      const before = threads.workers();
      // Two checks so that each thread holds one (a check goes to the thread with the fewest in flight).
      const checks = [runner.checkSite(silent.url, undefined, {}), runner.checkSite(silent.url, undefined, {})];
      await until(() => (silent.accepted() === 2 ? true : undefined));
      const victim = before[0];
      if (victim === undefined) throw new Error("no thread");
      await victim.terminate();
      expect(await checks[0]).toMatchObject({ kind: "overloaded", overload: { why: "thread_lost" } });
      expect(exits).toEqual([expect.objectContaining({ thread: 0, lost: 1, replaced: true, restartInMs: 0 })]);
      const after = threads.workers();
      expect(after).toHaveLength(2);
      expect(after[0]).not.toBe(victim);
      // ready() now waits for the replacement's own boot, not the first thread's.
      let booted = false;
      const ready = threads.ready().then(() => (booted = true));
      await new Promise((resolve) => setImmediate(resolve));
      expect(booted).toBe(false);
      await ready;
      // The replacement serves.
      const outcomes = await Promise.all([runner.checkSite(ok.url, undefined, {}), runner.checkSite(ok.url, undefined, {})]);
      expect(outcomes.map((outcome) => outcome.kind)).toEqual(["result", "result"]);
      // The other thread's check was not touched: it is still waiting on the silent target.
      expect(silent.closed()).toBe(1);
    } finally {
      await silent.close();
    }
  });
});

describe("a probe thread that keeps dying", () => {
  // Short delays so the test is quick; the rule is the production one (restart always, doubling, capped).
  const restart = { firstDelayMs: 50, maxDelayMs: 400, healthyAfterMs: 60_000 };

  it("is replaced every time, more times than the old limit of 5 in 10 s, with a growing delay, and serves checks once back", async () => {
    const exits: ThreadExit[] = [];
    const threads = createProbeThreads(OPTIONS, { threads: 1, maxLoopDelayMs: 1_000, restart, onThreadExit: (exit) => exits.push(exit) });
    try {
      for (let death = 1; death <= 7; death++) {
        await threads.ready();
        expect(threads.load.liveThreads()).toBe(1);
        const [thread] = threads.workers();
        if (thread === undefined) throw new Error(`no thread before death ${death}`);
        await thread.terminate();
        // Until its replacement boots, no thread is alive: the service reports not ready.
        expect(threads.load.liveThreads()).toBe(0);
      }
      expect(exits.map((exit) => exit.restartInMs)).toEqual([0, 50, 100, 200, 400, 400, 400]);
      expect(exits.every((exit) => exit.replaced)).toBe(true);
      await threads.ready();
      expect(threads.load.liveThreads()).toBe(1);
      expect((await runnerOn(threads).checkSite(ok.url, undefined, {})).kind).toBe("result");
    } finally {
      await threads.close();
    }
  }, 60_000);

  it("a check asked for while no thread runs is overload at once, not a defect", async () => {
    const threads = createProbeThreads(OPTIONS, {
      threads: 1,
      maxLoopDelayMs: 1_000,
      restart: { firstDelayMs: 5_000, maxDelayMs: 5_000, healthyAfterMs: 60_000 },
    });
    try {
      for (let death = 1; death <= 2; death++) {
        await threads.ready();
        await threads.workers()[0]?.terminate();
      }
      // The second death in a row waits 5 s for its replacement.
      expect(threads.workers()).toEqual([]);
      expect(await runnerOn(threads).checkSite(ok.url, undefined, {})).toMatchObject({
        kind: "overloaded",
        overload: { why: "no_thread" },
      });
    } finally {
      await threads.close();
    }
  }, 60_000);
});

describe("closing probe threads", () => {
  it("lets the checks in flight finish, then stops its threads; later checks are refused as defects", async () => {
    const slow = await startRawTarget({ kind: "delayed", delayMs: 300 });
    const threads = createProbeThreads(OPTIONS, { threads: 1, maxLoopDelayMs: 1_000 });
    const runner = runnerOn(threads);
    try {
      await threads.ready();
      const [thread] = threads.workers();
      const check = runner.checkSite(slow.url, undefined, {});
      await until(() => (slow.connections() === 1 ? true : undefined));
      let checkDone = false;
      void check.then(() => (checkDone = true));
      await runner.close();
      expect(checkDone).toBe(true);
      const outcome = await check;
      expect(outcome.kind).toBe("result");
      expect(threads.workers()).toEqual([]);
      expect(thread?.threadId).toBe(-1);
      await expect(runner.checkSite(ok.url, undefined, {})).rejects.toThrow("the prober is closed");
    } finally {
      await slow.close();
    }
  });
});
