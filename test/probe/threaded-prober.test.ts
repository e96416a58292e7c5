import { once } from "node:events";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HopRequest } from "../../src/probe/hop-types.js";
import { sharedClockMs } from "../../src/probe/clock.js";
import { createThreadedProber, type ThreadExit, type ThreadedProber } from "../../src/probe/threaded-prober.js";
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
const request = (url: string, extra: Partial<HopRequest> = {}): HopRequest => ({ url: new URL(url), method: "GET", timeoutMs: 10_000, ports: { kind: "fetch-safe" }, ...extra });

let ok: RawTarget;

beforeAll(async () => {
  ok = await startRawTarget({ kind: "delayed", delayMs: 0 });
});

afterAll(async () => {
  await ok.close();
});

describe("a prober on probe threads", () => {
  let prober: ThreadedProber;
  const exits: ThreadExit[] = [];

  beforeAll(async () => {
    prober = createThreadedProber(OPTIONS, { threads: 2, maxLoopDelayMs: 1_000, onThreadExit: (exit) => exits.push(exit) });
    // A hop sent while its thread boots (seconds from source on a busy machine) would wait for it, past its start grace.
    await prober.ready();
  });

  afterAll(async () => {
    await prober.close();
  });

  it("answers a hop with the outcome as plain data, and the span read on the thread", async () => {
    const outcome = await prober.hop(request(ok.url));
    expect(outcome.kind).toBe("response");
    if (outcome.kind !== "response") return;
    expect(outcome.response.status).toBe(200);
    expect(outcome.response.url).toBe(ok.url);
    expect(outcome.span.endedAt).toBeGreaterThanOrEqual(outcome.span.startedAt);
    // The shared clock is on the epoch scale, as this thread reads it too.
    expect(Math.abs(outcome.span.endedAt - (performance.timeOrigin + performance.now()))).toBeLessThan(60_000);
  });

  it("answers every hop of a burst larger than it starts in one turn, each with its own outcome", async () => {
    const outcomes = await Promise.all(Array.from({ length: 50 }, (_, index) => prober.hop(request(`${ok.url}burst/${index}`))));
    expect(outcomes.map((outcome) => (outcome.kind === "response" ? outcome.response.url : outcome.kind))).toEqual(
      Array.from({ length: 50 }, (_, index) => `${ok.url}burst/${index}`),
    );
  });

  it("screens on the calling thread, with the same policy", () => {
    expect(prober.screen(new URL("http://10.0.0.1/"), { kind: "fetch-safe" })?.rule).toBe("non_public_address");
    expect(prober.screen(new URL(ok.url), { kind: "fetch-safe" })).toBeNull();
  });

  it("a caller's abort reaches the thread: the target sees its connection closed and the hop fails as aborted", async () => {
    const silent = await startSilentTarget();
    try {
      const caller = new AbortController();
      const hop = prober.hop(request(silent.url, { signal: caller.signal }));
      await until(() => (silent.accepted() === 1 ? true : undefined));
      caller.abort(new Error("caller gone"));
      const outcome = await hop;
      expect(outcome.kind).toBe("failure");
      await until(() => (silent.closed() === 1 ? true : undefined));
    } finally {
      await silent.close();
    }
  });

  it("one signal over a check's hops: an abort ends every hop in flight under it, after earlier hops answered under it", async () => {
    const silent = await startSilentTarget();
    try {
      const caller = new AbortController();
      // Answered and settled first, as a check's earlier hops are.
      expect((await prober.hop(request(ok.url, { signal: caller.signal }))).kind).toBe("response");
      const hops = [prober.hop(request(silent.url, { signal: caller.signal, timeoutMs: 60_000 })), prober.hop(request(silent.url, { signal: caller.signal, timeoutMs: 60_000 }))];
      await until(() => (silent.accepted() === 2 ? true : undefined));
      caller.abort(new Error("caller gone"));
      expect((await Promise.all(hops)).map((outcome) => outcome.kind)).toEqual(["failure", "failure"]);
      await until(() => (silent.closed() === 2 ? true : undefined));
    } finally {
      await silent.close();
    }
  });

  it("a signal already aborted still sends the hop, which ends at once without waiting for its timeout", async () => {
    const silent = await startSilentTarget();
    try {
      const outcome = await prober.hop(request(silent.url, { signal: AbortSignal.abort(new Error("already")), timeoutMs: 60_000 }));
      expect(outcome.kind).toBe("failure");
    } finally {
      await silent.close();
    }
  });

  it("a hop that waited to start longer than the grace is overload, decided before anything is sent: the target is not blamed for our delay", async () => {
    const silent = await startSilentTarget();
    try {
      // Asked for 29.8 s ago with a 30 s timeout: before, it was sent with 0.2 s left and reported as the target's timeout.
      const outcome = await prober.hop(request(silent.url, { timeoutMs: 30_000, askedAt: sharedClockMs() - 29_800 }));
      expect(outcome).toMatchObject({ kind: "overloaded", overload: { why: "late_start" } });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(silent.accepted()).toBe(0);
    } finally {
      await silent.close();
    }
  });

  it("starts each thread with a small nursery (8 MiB young generation): its garbage is short-lived", async () => {
    await prober.ready();
    for (const thread of prober.threads()) expect(thread.resourceLimits?.maxYoungGenerationSizeMb).toBe(8);
  });

  it("reports each thread's loop delay", async () => {
    const reports = await until(() => {
      const delays = prober.load.loopDelays();
      return delays.length === 2 ? delays : undefined;
    });
    expect(reports.map((report) => report.thread).sort()).toEqual([0, 1]);
    for (const report of reports) {
      expect(report.p99Ms).toBeGreaterThanOrEqual(report.p50Ms);
      expect(report.maxMs).toBeGreaterThanOrEqual(0);
    }
    expect(prober.load.congested()).toBe(false);
  });

  it("a thread that dies ends its hops in flight as overload (no verdict on the target), and is replaced", async () => {
    const silent = await startSilentTarget();
    try {
      const before = prober.threads();
      // Two hops so that each thread holds one (a hop goes to the thread with the fewest in flight).
      const hops = [prober.hop(request(silent.url)), prober.hop(request(silent.url))];
      await until(() => (silent.accepted() === 2 ? true : undefined));
      const victim = before[0];
      if (victim === undefined) throw new Error("no thread");
      await victim.terminate();
      expect(await hops[0]).toMatchObject({ kind: "overloaded", overload: { why: "thread_lost" } });
      expect(exits).toEqual([expect.objectContaining({ thread: 0, lost: 1, replaced: true, restartInMs: 0 })]);
      const after = prober.threads();
      expect(after).toHaveLength(2);
      expect(after[0]).not.toBe(victim);
      // ready() now waits for the replacement's own boot, not the first thread's.
      let booted = false;
      const ready = prober.ready().then(() => (booted = true));
      await new Promise((resolve) => setImmediate(resolve));
      expect(booted).toBe(false);
      await ready;
      // The replacement serves.
      const outcomes = await Promise.all([prober.hop(request(ok.url)), prober.hop(request(ok.url))]);
      expect(outcomes.map((outcome) => outcome.kind)).toEqual(["response", "response"]);
      // The other thread's hop was not touched: it is still waiting on the silent target.
      expect(silent.closed()).toBe(1);
    } finally {
      await silent.close();
    }
  });
});

describe("a probe thread that keeps dying", () => {
  // Short delays so the test is quick; the rule is the production one (restart always, doubling, capped).
  const restart = { firstDelayMs: 50, maxDelayMs: 400, healthyAfterMs: 60_000 };

  it("is replaced every time, more times than the old limit of 5 in 10 s, with a growing delay, and serves hops once back", async () => {
    const exits: ThreadExit[] = [];
    const prober = createThreadedProber(OPTIONS, { threads: 1, maxLoopDelayMs: 1_000, restart, onThreadExit: (exit) => exits.push(exit) });
    try {
      for (let death = 1; death <= 7; death++) {
        await prober.ready();
        expect(prober.load.liveThreads()).toBe(1);
        const [thread] = prober.threads();
        if (thread === undefined) throw new Error(`no thread before death ${death}`);
        await thread.terminate();
        // Until its replacement boots, no thread is alive: the service reports not ready.
        expect(prober.load.liveThreads()).toBe(0);
      }
      expect(exits.map((exit) => exit.restartInMs)).toEqual([0, 50, 100, 200, 400, 400, 400]);
      expect(exits.every((exit) => exit.replaced)).toBe(true);
      await prober.ready();
      expect(prober.load.liveThreads()).toBe(1);
      expect((await prober.hop(request(ok.url))).kind).toBe("response");
    } finally {
      await prober.close();
    }
  }, 60_000);

  it("a hop asked for while no thread runs is overload at once, not a defect", async () => {
    const prober = createThreadedProber(OPTIONS, { threads: 1, maxLoopDelayMs: 1_000, restart: { firstDelayMs: 5_000, maxDelayMs: 5_000, healthyAfterMs: 60_000 } });
    try {
      for (let death = 1; death <= 2; death++) {
        await prober.ready();
        await prober.threads()[0]?.terminate();
      }
      // The second death in a row waits 5 s for its replacement.
      expect(prober.threads()).toEqual([]);
      expect(await prober.hop(request(ok.url))).toMatchObject({ kind: "overloaded", overload: { why: "no_thread" } });
    } finally {
      await prober.close();
    }
  }, 60_000);
});

describe("closing a prober on probe threads", () => {
  it("lets the hops in flight finish, then stops its threads; later hops are refused as defects", async () => {
    const slow = await startRawTarget({ kind: "delayed", delayMs: 300 });
    const prober = createThreadedProber(OPTIONS, { threads: 1, maxLoopDelayMs: 1_000 });
    try {
      await prober.ready();
      const [thread] = prober.threads();
      const hop = prober.hop(request(slow.url));
      await until(() => (slow.connections() === 1 ? true : undefined));
      let hopDone = false;
      void hop.then(() => (hopDone = true));
      await prober.close();
      expect(hopDone).toBe(true);
      const outcome = await hop;
      expect(outcome.kind).toBe("response");
      expect(prober.threads()).toEqual([]);
      expect(thread?.threadId).toBe(-1);
      await expect(prober.hop(request(ok.url))).rejects.toThrow("the prober is closed");
    } finally {
      await slow.close();
    }
  });
});
