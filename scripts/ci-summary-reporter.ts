import { appendFileSync } from "node:fs";
import type { Reporter, TestModule, TestSuite } from "vitest/node";

/**
 * The end of a test run in words a CI log reader can act on, used by
 * scripts/test-report.sh beside vitest's default reporter.
 *
 * Vitest's own counts hide one failure kind: when a `beforeAll` hook throws
 * (a Redis Cluster that did not form in time, say), every test under it is
 * reported *skipped*, not failed, and the run exits 1 with "0 failed". A CI
 * that prints only those counts then reads "0 failed, 42 skipped" and a red
 * status with no reason in its tail. So this reporter counts failed hooks and
 * modules as failures of their own, names each one with its first error line,
 * and writes the same lines to SITEDIAG_TEST_FAILURES, which .ci/run prints
 * last, after every Node line, where a truncated log still shows them.
 */
export default class CiSummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<{ message?: string; name?: string }>): void {
    const label = process.env.SITEDIAG_TEST_LABEL;
    const tests = modules.flatMap((module) => [...module.children.allTests()]);
    const count = (state: string) => tests.filter((test) => test.result().state === state).length;
    const failures = [
      ...modules.flatMap((module) => failuresOf(module)),
      ...unhandled.map((error) => `unhandled error: ${described(error)}`),
    ];
    const passed = count("passed");
    const failed = count("failed");
    const skipped = count("skipped") + count("pending");
    const errors = failures.length - failed;
    const counts = `${passed} passed, ${failed} failed, ${skipped} skipped${errors > 0 ? `, ${errors} failed hooks or modules` : ""}`;
    console.log(label !== undefined ? `${label} results: ${counts}` : `tests: ${counts}`);
    if (process.env.SITEDIAG_TEST_TOTALS !== undefined)
      appendFileSync(process.env.SITEDIAG_TEST_TOTALS, `${passed} ${failed} ${skipped} ${Math.max(errors, 0)}\n`);

    printSlowest(modules);
    if (failures.length === 0) return;
    const prefix = label !== undefined ? `${label}: ` : "";
    const lines = failures.map((failure) => `${prefix}FAIL ${failure}`);
    console.log(`failures (${failures.length}):\n${lines.join("\n")}`);
    if (process.env.SITEDIAG_TEST_FAILURES !== undefined) appendFileSync(process.env.SITEDIAG_TEST_FAILURES, `${lines.join("\n")}\n`);
  }
}

/** Every failed test, hook and module load of one file, each a line naming where it failed and why. */
function failuresOf(module: TestModule): string[] {
  const file = module.project.name === "" ? module.relativeModuleId : `${module.relativeModuleId} [${module.project.name}]`;
  const found = module.errors().map((error) => `${file} (loading or a file-level hook): ${described(error)}`);
  for (const suite of module.children.allSuites()) found.push(...suiteErrors(file, suite));
  for (const test of module.children.allTests()) {
    const result = test.result();
    if (result.state === "failed") found.push(`${file} > ${test.fullName}: ${described(result.errors[0] ?? { message: "failed" })}`);
  }
  return found;
}

function suiteErrors(file: string, suite: TestSuite): string[] {
  return suite.errors().map((error) => `${file} > ${suite.fullName} (a hook): ${described(error)}`);
}

/** Where a line's time went: the slowest files, each its wall time running hooks and tests (loading its modules not counted). */
function printSlowest(modules: ReadonlyArray<TestModule>): void {
  const shown = Number(process.env.SITEDIAG_TEST_SLOWEST ?? 15);
  const files = modules.map((module) => ({ name: module.relativeModuleId, ms: module.diagnostic().duration }));
  files.sort((a, b) => b.ms - a.ms);
  console.log(`slowest ${Math.min(shown, files.length)} of ${files.length} test files (wall seconds):`);
  for (const file of files.slice(0, shown)) console.log(`${(file.ms / 1000).toFixed(1).padStart(7)}  ${file.name}`);
}

/** "Name: first line of the message", as a stack trace's first line reads. */
function described(error: { readonly name?: string; readonly message?: string }): string {
  const line = firstLine(error.message);
  return error.name !== undefined && error.name !== "" ? `${error.name}: ${line}` : line;
}

function firstLine(text: string | undefined): string {
  const line = (text ?? "").split("\n").find((candidate) => candidate.trim() !== "") ?? "(no message)";
  return line.length > 400 ? `${line.slice(0, 400)}...` : line;
}
