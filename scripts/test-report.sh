#!/usr/bin/env bash
# Runs the whole vitest suite and ends with one plain summary line
# ("tests: N passed, N failed, N skipped") that any CI log reader understands.
# With SITEDIAG_TEST_LABEL set (one run of several, e.g. per Node line) the
# line is "LABEL results: ..." instead, and the counts are appended to the
# file SITEDIAG_TEST_TOTALS so the caller can print the one plain line itself.
# Before it, the slowest test files with their durations (SITEDIAG_TEST_SLOWEST,
# 15 by default), so a CI log shows where a line's time went.
set -uo pipefail
cd "$(dirname "$0")/.."
report=$(mktemp)
npx vitest run --reporter=default --reporter=json --outputFile.json="$report"
status=$?
node -e '
  const fs = require("fs");
  const r = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  const label = process.env.SITEDIAG_TEST_LABEL;
  const counts = `${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`;
  console.log(label ? `${label} results: ${counts}` : `tests: ${counts}`);
  if (process.env.SITEDIAG_TEST_TOTALS) fs.appendFileSync(process.env.SITEDIAG_TEST_TOTALS, `${r.numPassedTests} ${r.numFailedTests} ${skipped}\n`);
  // Where the time went: the slowest files, each its wall time running hooks and tests (loading its modules not counted).
  const root = process.cwd() + "/";
  const files = r.testResults.map((file) => ({ name: file.name.replace(root, ""), ms: file.endTime - file.startTime }));
  files.sort((a, b) => b.ms - a.ms);
  const shown = Number(process.env.SITEDIAG_TEST_SLOWEST ?? 15);
  console.log(`slowest ${Math.min(shown, files.length)} of ${files.length} test files (wall seconds):`);
  for (const file of files.slice(0, shown)) console.log(`${(file.ms / 1000).toFixed(1).padStart(7)}  ${file.name}`);
' "$report" || true
rm -f "$report"
exit $status
