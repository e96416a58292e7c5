import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HOSTILE_FAMILIES } from "../fixtures/hostile-families.js";
import { runHostileFuzz } from "../fixtures/hostile-harness.js";

/**
 * The hostile-target fuzzer (issue 28): generated target behaviours, served
 * from loopback, each checked by is-site-down and redirect-check on probe
 * threads as `serve` runs them (test/fixtures/hostile-harness.ts says what is
 * checked). In CI: a fixed seed for a fixed time. On demand, longer or other:
 *
 *   SITEDIAG_FUZZ_SEED=123 SITEDIAG_FUZZ_CASES=5000 npx vitest run --project load test/load/hostile-targets.test.ts
 *   SITEDIAG_FUZZ_REPLAY=heads:3548103992 npx vitest run --project load test/load/hostile-targets.test.ts
 *
 * SITEDIAG_FUZZ_SECONDS bounds the time spent starting cases (20 s unless
 * SITEDIAG_FUZZ_CASES or SITEDIAG_FUZZ_REPLAY is given, then none);
 * SITEDIAG_FUZZ_FAMILIES=heads,h2 narrows the families;
 * SITEDIAG_FUZZ_CONCURRENCY sets the cases in flight (6; 1 for a replay).
 * It runs in the load project, in a worker of its own but beside up to five other test files on the
 * machine's cores (vitest.config.ts): it bounds probe-loop stalls and the healthy site's time, and
 * blames a stall or a timeout on a case only when the case, run again alone, does it too.
 */
const env = process.env;
const SEED = Number(env.SITEDIAG_FUZZ_SEED ?? "28");
const CASES = env.SITEDIAG_FUZZ_CASES === undefined ? Number.POSITIVE_INFINITY : Number(env.SITEDIAG_FUZZ_CASES);
const REPLAY = env.SITEDIAG_FUZZ_REPLAY?.split(",")
  .map((id) => id.trim())
  .filter((id) => id !== "");
const BUDGET_MS =
  env.SITEDIAG_FUZZ_SECONDS !== undefined
    ? Number(env.SITEDIAG_FUZZ_SECONDS) * 1_000
    : env.SITEDIAG_FUZZ_CASES !== undefined || REPLAY !== undefined
      ? Number.POSITIVE_INFINITY
      : 20_000;
const ONLY = env.SITEDIAG_FUZZ_FAMILIES?.split(",").map((name) => name.trim());
/** Where each case is noted as it starts and ends, for a crash that leaves no summary. */
const JOURNAL = env.SITEDIAG_FUZZ_JOURNAL ?? join(tmpdir(), `sitediag-fuzz-${process.pid}.log`);
/** A replay runs its cases one at a time unless told. */
const CONCURRENCY = Number(env.SITEDIAG_FUZZ_CONCURRENCY ?? (REPLAY === undefined ? "6" : "1"));
/** The budget, plus the longest a case in flight can still take, plus booting the probe threads from source. */
const TEST_TIMEOUT_MS = Number.isFinite(BUDGET_MS) ? BUDGET_MS + 60_000 : 24 * 3_600_000;

describe("hostile targets", () => {
  it(
    "every generated target gets a verdict in time, no probe thread dies, memory stays bounded, a healthy site stays up",
    async () => {
      const families = ONLY === undefined ? HOSTILE_FAMILIES : HOSTILE_FAMILIES.filter((family) => ONLY.includes(family.name));
      expect(families.length).toBeGreaterThan(0);
      const report = await runHostileFuzz({
        seed: SEED,
        families,
        budgetMs: BUDGET_MS,
        maxCases: CASES,
        concurrency: CONCURRENCY,
        ...(REPLAY === undefined ? {} : { replay: REPLAY }),
        log: (line) => console.log(line),
        journal: JOURNAL,
      });
      // The journal matters only when the process died before the summary; one left by a run that finished is noise.
      if (env.SITEDIAG_FUZZ_JOURNAL === undefined) rmSync(JOURNAL, { force: true });
      expect(report.cases).toBeGreaterThan(0);
      expect(report.threadDeaths).toEqual([]);
      expect(report.runProblems).toEqual([]);
      expect(report.failures.map((failure) => `${failure.id} (${failure.description}): ${failure.problems.join("; ")}`)).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
