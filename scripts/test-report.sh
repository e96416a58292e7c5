#!/usr/bin/env bash
# Runs the whole vitest suite and ends with one plain summary line
# ("tests: N passed, N failed, N skipped") that any CI log reader understands.
set -uo pipefail
cd "$(dirname "$0")/.."
report=$(mktemp)
npx vitest run --reporter=default --reporter=json --outputFile.json="$report"
status=$?
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
' "$report" || true
rm -f "$report"
exit $status
