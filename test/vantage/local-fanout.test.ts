import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SiteCheckOutcome } from "../../src/diagnostics/site-check-result.js";
import { type AbortWatch, sharedClockMs } from "../../src/probe/clock.js";
import type { DiagnosticRunner } from "../../src/runner/diagnostic-runner.js";
import { createLocalFanout } from "../../src/vantage/local-fanout.js";
import type { VantageEntry } from "../../src/vantage/vantage-fanout.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { createTestEnv, runnerOf, type TestEnv } from "../fixtures/test-env.js";

let targets: HttpTargets;
let env: TestEnv;
let runner: DiagnosticRunner;

/** The real runner, telling each job's signal and outcome as they happen. */
function watched(
  inner: DiagnosticRunner,
): DiagnosticRunner & { readonly signals: AbortWatch[]; readonly outcomes: Promise<SiteCheckOutcome>[] } {
  const signals: AbortWatch[] = [];
  const outcomes: Promise<SiteCheckOutcome>[] = [];
  return Object.assign({}, inner, {
    signals,
    outcomes,
    checkSite: (raw: string, signal: AbortWatch | undefined, options: object) => {
      if (signal !== undefined) signals.push(signal);
      const outcome = inner.checkSite(raw, signal, options);
      outcomes.push(outcome);
      return outcome;
    },
  });
}

beforeAll(async () => {
  targets = await startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 }, "/hang": { kind: "hang" } } });
  env = createTestEnv();
  runner = runnerOf(env);
});

afterAll(async () => {
  await env.close();
  await targets.close();
});

async function entriesOf(iterable: AsyncIterable<VantageEntry<SiteCheckOutcome>>): Promise<VantageEntry<SiteCheckOutcome>[]> {
  const all: VantageEntry<SiteCheckOutcome>[] = [];
  for await (const entry of iterable) all.push(entry);
  return all;
}

describe("the local fanout", () => {
  it("runs the job on each vantage's own runner; a name it does not know has no live instance", async () => {
    const fanout = createLocalFanout({ info: { name: "local" }, runner }, [{ info: { name: "second", label: "Second" }, runner }]);
    expect(fanout.self).toEqual({ name: "local" });
    expect((await fanout.alive()).map((vantage) => vantage.name)).toEqual(["local", "second"]);
    const entries = await entriesOf(
      fanout.run(
        { kind: "site-check", raw: targets.url("/ok"), options: {} },
        ["second", "nowhere", "local"],
        sharedClockMs() + 10_000,
        undefined,
      ),
    );
    expect(entries).toHaveLength(3);
    expect(entries[0]).toEqual({ vantage: { name: "nowhere" }, state: "unavailable", reason: "no_live_instance", elapsedMs: 0 });
    const answered = entries.filter((entry) => entry.state === "answered");
    expect(answered.map((entry) => entry.vantage.name).sort()).toEqual(["local", "second"]);
    for (const entry of answered)
      expect(entry.state === "answered" && entry.outcome.kind === "result" && entry.outcome.result.status).toBe("up");
  });

  it("at the deadline a vantage not in is unavailable, and its job is withdrawn", async () => {
    const slow = watched(runner);
    const fanout = createLocalFanout({ info: { name: "local" }, runner: slow });
    const entries = await entriesOf(
      fanout.run({ kind: "site-check", raw: targets.url("/hang"), options: {} }, ["local"], sharedClockMs() + 300, undefined),
    );
    expect(entries).toMatchObject([{ vantage: { name: "local" }, state: "unavailable", reason: "deadline" }]);
    expect(entries[0]?.elapsedMs).toBeGreaterThanOrEqual(290);
    expect(slow.signals[0]?.aborted).toBe(true);
    expect((await slow.outcomes[0])?.kind).toBe("cancelled");
  });

  it("when the caller's signal aborts, the iteration ends without further entries and the jobs are withdrawn", async () => {
    const slow = watched(runner);
    const fanout = createLocalFanout({ info: { name: "local" }, runner: slow });
    const caller = new AbortController();
    const done = entriesOf(
      fanout.run(
        { kind: "site-check", raw: targets.url("/hang"), options: {} },
        ["local", "nowhere"],
        sharedClockMs() + 10_000,
        caller.signal,
      ),
    );
    setTimeout(() => caller.abort(new Error("the caller left")), 200);
    const entries = await done;
    expect(entries.map((entry) => entry.vantage.name)).toEqual(["nowhere"]);
    expect(slow.signals[0]?.aborted).toBe(true);
    expect((await slow.outcomes[0])?.kind).toBe("cancelled");
  });

  it("once closed it has no live vantage and runs nothing", async () => {
    const fanout = createLocalFanout({ info: { name: "local" }, runner });
    await fanout.close();
    expect(await fanout.alive()).toEqual([]);
    const entries = await entriesOf(
      fanout.run({ kind: "site-check", raw: targets.url("/ok"), options: {} }, ["local"], sharedClockMs() + 1_000, undefined),
    );
    expect(entries).toMatchObject([{ state: "unavailable", reason: "no_live_instance" }]);
  });

  it("refuses two vantages of one name", () => {
    expect(() => createLocalFanout({ info: { name: "a" }, runner }, [{ info: { name: "a" }, runner }])).toThrow(/twice/);
  });
});
