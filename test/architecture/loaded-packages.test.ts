import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/**
 * Every isolate pays for what it loads (undici ~15 MiB, ioredis ~20 MiB), and
 * the service has two: the main thread and each probe thread. A deployment on
 * SQLite with the probe's own HTTP exchange needs neither package, so neither
 * may be loaded by the commands, the prober, or a SQLite store. Run in a
 * child process: this test process has loaded plenty of its own.
 */
const CHILD = `
import { createRequire } from "node:module";
await import("./src/cli/run-cli.ts");
await import("./src/probe/prober.ts");
const { openStore } = await import("./src/access/open-store.ts");
const store = await openStore({ kind: "sqlite", path: process.env.STORE_PATH });
await store.close();
const packages = Object.keys(createRequire(process.cwd() + "/").cache).flatMap((path) => /node_modules\\/(ioredis|undici)\\//.exec(path)?.[1] ?? []);
console.log(JSON.stringify([...new Set(packages)]));
`;

describe("what a SQLite deployment loads", () => {
  it("loads neither undici nor ioredis", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sitediag-loaded-"));
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", CHILD], {
        env: { ...process.env, STORE_PATH: join(dir, "store.db") },
      });
      expect(JSON.parse(stdout.trim().split("\n").at(-1) ?? "null")).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
