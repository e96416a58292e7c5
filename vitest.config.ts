import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * Tests that need processes, Redis, real protocol timeouts or load: the slow
 * project. Everything else is the fast one, run on every change with
 * `npm run test:fast`; `npm test` and CI run both.
 */
const SLOW = [
  // The "load" project's: each in a worker of its own (isolated), so that its memory bounds measure only itself.
  "test/load/**/*.test.ts",
  "test/access/**/*.test.ts",
  "test/vantage/**/*.test.ts",
  "test/cli/**/*.test.ts",
  "test/service/batch.test.ts",
  "test/server/rest-batch.test.ts",
  "test/server/shutdown.test.ts",
  "test/diagnostics/site-check-timeout.test.ts",
  "test/diagnostics/redirect-trace-timeouts.test.ts",
  "test/openapi/generation.test.ts",
  // The bundled bin as this run's build wrote it.
  "test/scripts/build-bin.test.ts",
  // Checks in a child process, so that a native abort fails the test, not the runner.
  "test/probe/http/h2-malformed-head.test.ts",
  // A real browser against `sitediag serve` as its own process.
  "test/web/page.test.ts",
  "test/web/page-verdict.test.ts",
  "test/web/page-front.test.ts",
  "test/web/page-batch.test.ts",
  "test/web/page-batch-audit.test.ts",
  "test/web/page-details.test.ts",
  "test/web/page-families.test.ts",
  "test/web/page-addresses.test.ts",
  "test/web/page-revocation.test.ts",
  "test/web/page-name-resolution.test.ts",
  "test/web/page-dnssec-registration.test.ts",
  "test/web/page-vantages.test.ts",
  "test/web/page-vantages-regions.test.ts",
  "test/web/page-chain.test.ts",
  "test/web/page-check-warnings.test.ts",
  "test/web/page-search.test.ts",
];

/**
 * Probe and diagnostics behaviours run a second time with every diagnostic
 * run whole on a probe thread (SITEDIAG_PROBE_THREADS as `serve` runs by
 * default): the worker bridge must change nothing a diagnostic can see.
 */
const THREADED = [
  "test/probe/response-fidelity.test.ts",
  "test/diagnostics/site-check-classification.test.ts",
  "test/diagnostics/site-check-failures.test.ts",
  "test/diagnostics/site-check-tls.test.ts",
  "test/diagnostics/site-check-dns.test.ts",
  "test/diagnostics/site-check-timeout.test.ts",
  "test/diagnostics/redirect-trace-chain.test.ts",
  "test/diagnostics/redirect-trace-fallback.test.ts",
  "test/diagnostics/redirect-trace-policy.test.ts",
  "test/diagnostics/family-comparison.test.ts",
  // Every address of the first host and its TLS versions (issue 40): the surveys cross the bridge in details.
  "test/diagnostics/address-survey.test.ts",
  "test/diagnostics/tls-version-survey.test.ts",
  "test/diagnostics/redirect-trace-timeouts.test.ts",
  "test/service/check-site.test.ts",
  "test/diagnostics/site-check-cancel.test.ts",
  // What crosses the bridge beyond the contract: details (certificates, body prefixes, partial timings) and cookies.
  "test/diagnostics/site-check-details.test.ts",
  "test/diagnostics/redirect-trace-details.test.ts",
  "test/diagnostics/name-resolution-details.test.ts",
  "test/diagnostics/dnssec-details.test.ts",
  "test/diagnostics/registration-details.test.ts",
  "test/diagnostics/check-cookies.test.ts",
  // A stapled OCSP reading is read on the probe thread and crosses with the hop's tls.
  "test/diagnostics/stapled-ocsp-details.test.ts",
  // A kept connection lives on the thread that made it: the next hop must be sent there.
  "test/probe/http/connection-reuse.test.ts",
  // HTTP/2 over the bridge, and a kept session held by the thread that opened it.
  "test/probe/http/https-protocols.test.ts",
  // Certificates and heads a hostile site writes (issue 28): the probe thread that reads them survives.
  "test/diagnostics/odd-certificates.test.ts",
  "test/probe/hostile-heads.test.ts",
];

const shared = {
  // Each file starts its own loopback servers; files run in separate forks so
  // a crash in one cannot take another's sockets with it.
  pool: "forks",
  testTimeout: 30_000,
  hookTimeout: 60_000,
  // expect.poll gives up after 1 s by default: on a busy machine one look into a browser can take longer than that.
  // What is polled for still has to come; the test's own timeout bounds the wait.
  expect: { poll: { timeout: 20_000 } },
} as const;

/**
 * How many test files run at once: six (or one fewer than the cores, where
 * that is more), every project in one group. Vitest's default is one fewer
 * than the cores: one file at a time on a 2-core CI machine, where most files
 * spend much of their time waiting on sockets, child processes, timeouts, Redis
 * or a browser rather than computing. Vitest hands the files out project by
 * project (fast, load, slow, threaded), each project's longest first, and a
 * worker that finishes takes the next file whatever its project. Measured on 2
 * cores, one Node line, nothing else running (docs/benchmarks.md, issue 37):
 * four at a time with the load files last, two at a time, 208-223 s, the cores
 * idle for a third of the load files' 36-46 s and a quarter of the slow files'
 * first 30 s; six at a time with the load files last 201 s; six at a time in
 * one group 173-186 s, both cores busy for nearly all of it. The load files'
 * latency and memory bounds are measured against the same run (a baseline in
 * the same file) and held beside a second copy of the whole suite before this.
 */
const CORES_LEFT = availableParallelism() - 1;
const AT_ONCE = Math.max(CORES_LEFT, 6);

const LOAD = ["test/load/**/*.test.ts"];

export default defineConfig({
  test: {
    maxWorkers: AT_ONCE,
    projects: [
      // The fast files share their worker processes' module cache (isolate: false):
      // loading the modules once per worker instead of once per file is what
      // brings the inner loop under 30 s. Each file still starts and closes
      // its own servers; none keeps global state.
      {
        test: {
          ...shared,
          name: "fast",
          include: ["test/**/*.test.ts"],
          exclude: SLOW,
          isolate: false,
        },
      },
      {
        test: {
          ...shared,
          name: "threaded",
          include: THREADED,
          // Its files share their workers' modules, as the fast and slow ones do: the project 37.5 -> 25.9 CPU-s
          // alone. threaded-setup.ts forgets each file's probe threads when the file ends.
          isolate: false,
          // Its probe threads run this run's build of the thread (test/fixtures/test-env.ts), as serve runs them.
          globalSetup: ["test/fixtures/build-once.ts"],
          setupFiles: ["test/fixtures/threaded-setup.ts"],
          env: { SITEDIAG_TEST_PROBE_THREADS: "1" },
        },
      },
      {
        test: {
          ...shared,
          name: "slow",
          include: SLOW,
          // As the fast files: each worker loads the modules once. Measured side by side on the busy machine: the
          // slow project's CPU 215 s -> 181 s, its module loading 55 s -> 18 s. No slow file sets process.env or
          // global state; each starts and closes its own servers and processes.
          isolate: false,
          exclude: LOAD,
          globalSetup: ["test/fixtures/build-once.ts"],
        },
      },
      {
        test: {
          ...shared,
          name: "load",
          include: LOAD,
          globalSetup: ["test/fixtures/build-once.ts"],
        },
      },
    ],
  },
});
