import { describe, expect, it } from "vitest";
import type { HostileCase, HostileFamily } from "../fixtures/hostile-cases.js";
import { FUZZ_LIMITS, runHostileFuzz } from "../fixtures/hostile-harness.js";

/**
 * How the hostile-target fuzzer judges a timeout where its case expects a
 * verdict (test/fixtures/hostile-harness.ts). A target served from the test's
 * own process can miss its time because the machine is loaded (the CI run of
 * 2026-12-02 failed on a well-formed stapling site's 1.5 s handshake, which
 * answered in time alone), so such a case is run again alone and blamed only
 * if it times out there too. Both halves are held here: a target late only
 * the first time it is served blames nobody, and one that is always late
 * still fails its case.
 */

/** A valid 200 that comes this long after the request: past both checks' time limits, or at once. */
function lateUp(delayMs: number): HostileCase {
  return {
    description: `a 200 sent ${delayMs} ms after the request`,
    target: { kind: "raw", behaviour: { kind: "delayed", delayMs } },
    expect: { status: "up" },
  };
}

/** Late the first `lateTimes` times a case is served (as a loaded machine's target may be), on time after. */
function familyLateAtFirst(lateTimes: number): HostileFamily {
  let served = 0;
  const late = FUZZ_LIMITS.siteTimeoutMs + 1_000;
  return { name: "late", generate: () => lateUp(served++ < lateTimes ? late : 0) };
}

const RUN = { seed: 1, budgetMs: Number.POSITIVE_INFINITY, maxCases: 1, concurrency: 1 } as const;

describe("the hostile-target fuzzer's timeouts", () => {
  it("blames no case whose check timed out in the run but answers in time alone", async () => {
    const lines: string[] = [];
    const report = await runHostileFuzz({ ...RUN, families: [familyLateAtFirst(1)], log: (line) => lines.push(line) });
    expect(report.cases).toBe(1);
    expect(report.failures).toEqual([]);
    expect(report.runProblems).toEqual([]);
    expect(lines.join("\n")).toMatch(/timed out in the run but answered in time alone: late:\d+ \(.*timeout/);
  }, 60_000);

  it("fails a case whose check times out alone too", async () => {
    const report = await runHostileFuzz({ ...RUN, families: [familyLateAtFirst(Number.POSITIVE_INFINITY)] });
    expect(report.failures).toHaveLength(1);
    expect(report.failures[0]?.problems.join("\n")).toMatch(/\(http_timeout\).*a correct check says up/);
  }, 60_000);
});
