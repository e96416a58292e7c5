import { defineConfig } from "vitest/config";

/**
 * Tests that need processes, Redis, real protocol timeouts or load: the slow
 * project. Everything else is the fast one, run on every change with
 * `npm run test:fast`; `npm test` and CI run both.
 */
const SLOW = [
  "test/load/**/*.test.ts",
  "test/access/**/*.test.ts",
  "test/cli/**/*.test.ts",
  "test/service/batch.test.ts",
  "test/server/rest-batch.test.ts",
  "test/server/shutdown.test.ts",
  "test/diagnostics/site-check-timeout.test.ts",
  "test/diagnostics/redirect-trace-timeouts.test.ts",
  "test/openapi/generation.test.ts",
  // A real browser against `sitediag serve` as its own process.
  "test/web/page.test.ts",
];

const shared = {
  // Each file starts its own loopback servers; files run in separate forks so
  // a crash in one cannot take another's sockets with it.
  pool: "forks",
  testTimeout: 30_000,
  hookTimeout: 60_000,
} as const;

export default defineConfig({
  test: {
    projects: [
      // The fast files share their worker processes' module cache (isolate: false):
      // loading the modules once per worker instead of once per file is what
      // brings the inner loop under 30 s. Each file still starts and closes
      // its own servers; none keeps global state.
      { test: { ...shared, name: "fast", include: ["test/**/*.test.ts"], exclude: SLOW, isolate: false } },
      { test: { ...shared, name: "slow", include: SLOW } },
    ],
  },
});
