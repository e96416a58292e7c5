#!/usr/bin/env bash
# Runs the whole vitest suite and ends with one plain summary line
# ("tests: N passed, N failed, N skipped") that any CI log reader understands,
# the slowest test files, and every failure in one line each: a failed test,
# and also a failed hook or module, which vitest itself counts as skipped tests
# (scripts/ci-summary-reporter.ts). With SITEDIAG_TEST_LABEL set (one run of
# several, e.g. per Node line) the line is "LABEL results: ..." instead, the
# counts are appended to the file SITEDIAG_TEST_TOTALS and the failures to
# SITEDIAG_TEST_FAILURES, so the caller can print them once at its very end.
set -uo pipefail
cd "$(dirname "$0")/.."
npx vitest run --reporter=default --reporter=./scripts/ci-summary-reporter.ts
