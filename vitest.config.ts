import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Each file starts its own loopback servers; files run in separate forks so
    // a crash in one cannot take another's sockets with it.
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
