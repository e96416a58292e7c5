import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { createProbeQueue } from "../../../src/server/admission/probe-queue.js";
import { manualLoad } from "../../fixtures/manual-load.js";

const settled = <T>(promise: Promise<T>) => {
  const state: { done: boolean; value?: T } = { done: false };
  void promise.then((value) => Object.assign(state, { done: true, value }));
  return state;
};
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("the probe queue", () => {
  it("lets every check through at once while the probe loops keep up, and when probes run in-process", async () => {
    const manual = manualLoad();
    expect(await createProbeQueue({ load: manual.load, max: 4, maxWaitMs: 60_000 }).pass("CheckSite")).toBeNull();
    expect(await createProbeQueue({ load: undefined, max: 0, maxWaitMs: 60_000 }).pass("CheckSite")).toBeNull();
  });

  it("holds new checks while congested and lets them go, in order, when a report shows a loop under the limit", async () => {
    const manual = manualLoad();
    const counts: number[] = [];
    const queue = createProbeQueue({
      load: manual.load,
      max: 4,
      maxWaitMs: 60_000,
      observer: { waiting: (count) => counts.push(count), rejected: () => undefined },
    });
    manual.report(true);
    const first = settled(queue.pass("CheckSite"));
    const second = settled(queue.pass("TraceRedirects"));
    await turn();
    expect([first.done, second.done]).toEqual([false, false]);
    manual.report(true);
    await turn();
    expect(first.done).toBe(false);
    manual.report(false);
    await turn();
    expect([first, second]).toEqual([
      { done: true, value: null },
      { done: true, value: null },
    ]);
    expect(counts).toEqual([1, 2, 0]);
  });

  it("tells a check that waited when its turn came, and tells no check that passed at once", async () => {
    const manual = manualLoad();
    const queue = createProbeQueue({ load: manual.load, max: 4, maxWaitMs: 60_000 });
    const turns: string[] = [];
    expect(await queue.pass("CheckSite", () => turns.push("at once"))).toBeNull();
    manual.report(true);
    const waited = settled(queue.pass("CheckSite", () => turns.push("waited")));
    await turn();
    expect(turns).toEqual([]);
    manual.report(false);
    await turn();
    expect(waited).toEqual({ done: true, value: null });
    expect(turns).toEqual(["waited"]);
  });

  it("lets a check that arrives behind waiting ones wait too, even once the loops recovered", async () => {
    const manual = manualLoad();
    const queue = createProbeQueue({ load: manual.load, max: 200, maxWaitMs: 60_000 });
    manual.report(true);
    const waiting = Array.from({ length: 150 }, () => settled(queue.pass("CheckSite")));
    // Still congested when the newcomer arrives: it joins the end of the line.
    manual.report(true);
    const newcomer = settled(queue.pass("CheckSite"));
    manual.report(false);
    await turn();
    // A trickle per report: 128 of the 150, then the rest and the newcomer at the next one.
    expect(waiting.filter((state) => state.done)).toHaveLength(128);
    expect(newcomer.done).toBe(false);
    manual.report(false);
    await turn();
    expect(waiting.every((state) => state.done)).toBe(true);
    expect(newcomer.done).toBe(true);
  });

  it("refuses with Unavailable and a Retry-After when the queue is full, and names nothing charged", async () => {
    const manual = manualLoad();
    const rejected: string[] = [];
    const queue = createProbeQueue({
      load: manual.load,
      max: 1,
      maxWaitMs: 60_000,
      observer: { waiting: () => undefined, rejected: (operation, why) => rejected.push(`${operation}:${why}`) },
    });
    manual.report(true);
    const first = settled(queue.pass("CheckSite"));
    const refusal = await queue.pass("CheckSite");
    expect(refusal?.code).toBe(Code.Unavailable);
    expect(refusal?.metadata.get("retry-after")).toBe("1");
    expect(refusal?.rawMessage).toContain("nothing was charged");
    expect(rejected).toEqual(["CheckSite:full"]);
    manual.report(false);
    await turn();
    expect(first).toEqual({ done: true, value: null });
  });

  it("refuses a check that waited its longest, and no longer counts it as waiting", async () => {
    const manual = manualLoad();
    const counts: number[] = [];
    const rejected: string[] = [];
    const queue = createProbeQueue({
      load: manual.load,
      max: 4,
      maxWaitMs: 20,
      observer: { waiting: (count) => counts.push(count), rejected: (operation, why) => rejected.push(`${operation}:${why}`) },
    });
    manual.report(true);
    const refusal = await queue.pass("TraceRedirects");
    expect(refusal?.code).toBe(Code.Unavailable);
    expect(rejected).toEqual(["TraceRedirects:waited"]);
    expect(counts).toEqual([1, 0]);
  });
});
