import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const VITEST = join(ROOT, "node_modules/.bin/vitest");
const REPORTER = join(ROOT, "scripts/ci-summary-reporter.ts");

/**
 * CI's summary of a run (scripts/test-report.sh): a hook that throws leaves
 * vitest's tests "skipped" and its own count at "0 failed"; CI once ended red
 * with "0 failed, 42 skipped" and no reason in the tail of its log. The
 * reporter runs here over a tiny suite of its own, in a vitest of its own.
 */
describe("CI's summary reporter", () => {
  let dir: string;
  let outcome: { stdout: string; failures: string; totals: string; exitCode: number };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sitediag-ci-summary-"));
    writeFileSync(join(dir, "vitest.config.mjs"), "export default { test: { include: ['*.test.mjs'] } };\n");
    writeFileSync(
      join(dir, "hooks.test.mjs"),
      [
        'import { beforeAll, describe, expect, it } from "vitest";',
        'describe("needs a cluster", () => {',
        '  beforeAll(() => { throw new Error("Redis Cluster: timed out waiting until node 1 answers"); });',
        '  it("one", () => expect(1).toBe(1));',
        '  it("two", () => expect(1).toBe(1));',
        "});",
        'it("passes", () => expect(1).toBe(1));',
        'it("fails", () => expect("got").toBe("wanted"));',
        'it.skip("is skipped on purpose", () => undefined);',
      ].join("\n"),
    );
    const failures = join(dir, "failures");
    const totals = join(dir, "totals");
    // Only what a CI line sets: a vitest inherited from this worker's environment would take it for its own.
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SITEDIAG_TEST_LABEL: "node-vX",
      SITEDIAG_TEST_FAILURES: failures,
      SITEDIAG_TEST_TOTALS: totals,
    };
    const args = ["run", "--root", dir, `--reporter=${REPORTER}`];
    const done = await run(VITEST, args, { env, cwd: dir }).then(
      ({ stdout }) => ({ stdout, exitCode: 0 }),
      (error: { stdout?: string; code?: number }) => ({ stdout: error.stdout ?? "", exitCode: error.code ?? -1 }),
    );
    outcome = { ...done, failures: readFileSync(failures, "utf8"), totals: readFileSync(totals, "utf8") };
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("counts a failed hook apart from the tests it skipped, and says the run failed", () => {
    expect(outcome.exitCode).toBe(1);
    expect(outcome.stdout).toContain("node-vX results: 1 passed, 1 failed, 3 skipped, 1 failed hooks or modules");
    expect(outcome.totals).toBe("1 1 3 1\n");
  });

  it("names every failure in one line, with its file and first error line, for the end of CI's log", () => {
    const lines = outcome.failures.trim().split("\n");
    expect(lines).toEqual([
      "node-vX: FAIL hooks.test.mjs > needs a cluster (a hook): Error: Redis Cluster: timed out waiting until node 1 answers",
      "node-vX: FAIL hooks.test.mjs > fails: AssertionError: expected 'got' to be 'wanted' // Object.is equality",
    ]);
  });
});
