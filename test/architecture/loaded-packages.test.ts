import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/**
 * Every isolate pays for what it loads (undici ~15 MiB, ioredis ~20 MiB), and
 * the service has two: the main thread and each probe thread. A deployment on
 * SQLite with the probe's own HTTP exchange needs neither package, so neither
 * may be loaded by the commands, the prober, or a SQLite store. Run in a
 * child process: this test process has loaded plenty of its own. The child
 * loads the sources through tsx, not dist/: this is a fast-project test, and
 * only the slow and load projects build (test/fixtures/build-once.ts); the
 * modules a file imports are the same either way.
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

/**
 * What the runtime (dist/src and dist/gen) may import is what an install without
 * devDependencies holds: a package only tests, bench or the page build use
 * (undici, ajv, ...) sits in devDependencies and is missing in production.
 */
const ROOT = resolve(import.meta.dirname, "../..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

/** The packages a file names in import, export ... from, import() or require(); node: builtins and relative paths are not packages. */
function packagesImportedBy(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:\bfrom|\bimport|\brequire)\s*\(?\s*"((?:@[\w.-]+\/)?\w[\w.-]*)(?:\/[^"]*)?"/g)].map(
    (match) => match[1] ?? "",
  );
}

describe("what the runtime imports", () => {
  it("imports only runtime dependencies (not undici, a devDependency)", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    const runtime = new Set(Object.keys(manifest.dependencies));
    const offending = ["src", "gen"]
      .flatMap((dir) => sourceFiles(join(ROOT, dir)))
      .flatMap((file) =>
        packagesImportedBy(file)
          .filter((name) => !runtime.has(name))
          .map((name) => `${file.slice(ROOT.length + 1)} -> ${name}`),
      );
    expect(offending).toEqual([]);
    expect(runtime.has("undici")).toBe(false);
  });
});
