import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const WORKER = fileURLToPath(new URL("../fixtures/sqlite-statement-gc-worker.ts", import.meta.url));

describe("SQLite driver on the running Node line", () => {
  // Regression: with better-sqlite3 12 on Node 24.19+, collecting a Statement
  // outside a JS context hit `Assertion failed: (env) != nullptr` and killed
  // the process (vitest saw two test files' workers die).
  it("survives statements collected by the garbage collector between turns", () => {
    // Through tsx: the worker is test code, which the build leaves out.
    const child = spawnSync(process.execPath, ["--import", "tsx", WORKER], { encoding: "utf8", timeout: 60_000 });
    expect(child.stderr).not.toContain("Assertion failed");
    expect(child.signal).toBeNull();
    expect(child.status).toBe(0);
    expect(child.stdout).toContain("survived 300 rounds");
  });
});
