import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Where a newcomer looks for a file: test/ mirrors src/, helpers sit in test/fixtures/, and the page (web/)
 * reads only the service's shared words, never its machinery.
 */
const ROOT = resolve(import.meta.dirname, "../..");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

const testFiles = files(join(ROOT, "test")).map((file) => relative(join(ROOT, "test"), file));

/** Suites about the whole rather than one module: the load and attack suites, the import graph, and the page (which mirrors web/). */
const CROSS_CUTTING = new Set(["load", "architecture", "web"]);
/** Top-level folders of the project's own tooling, whose tests sit in test/ under the same name. */
const TOOLING = new Set(["scripts", "bench", "testkit"]);

describe("test/ mirrors src/", () => {
  it("every test file's folder is a folder of src/ (or named after the src/ module it tests, as config/ for config.ts)", () => {
    const offending = testFiles
      .filter((file) => file.endsWith(".test.ts"))
      .filter((file) => {
        const folder = dirname(file);
        if (folder === ".") return false;
        if (CROSS_CUTTING.has(folder.split("/")[0] ?? "")) return false;
        // The project's own tooling, as CI's summary reporter, the bench's readings and the tests' loopback kit.
        if (TOOLING.has(folder)) return !existsSync(join(ROOT, folder));
        return !existsSync(join(ROOT, "src", folder)) && !existsSync(join(ROOT, "src", `${folder}.ts`));
      });
    expect(offending).toEqual([]);
  });

  it("every helper (a .ts under test/ that is not a test) is in test/fixtures/", () => {
    const offending = testFiles.filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts") && !file.startsWith("fixtures/"));
    expect(offending).toEqual([]);
  });
});

/** Modules of src/ beyond src/shared/ that the page may bundle: pure words and formatting, no sockets, no Node. */
const PAGE_MAY_READ = new Set([
  "src/diagnostics/proxy-verdict.ts",
  "src/diagnostics/proxy-providers.ts",
  "src/diagnostics/starting-url.ts",
  "src/diagnostics/timing-text.ts",
  "src/vantage/vantage-row.ts",
]);

describe("web/ imports", () => {
  it("from src/ only src/shared/ and the pure modules it renders (and the generated messages)", () => {
    const offending = files(join(ROOT, "web", "src"))
      .filter((file) => file.endsWith(".ts"))
      .flatMap((file) =>
        [...readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)\.js"/g)].map((match) => ({
          file: relative(ROOT, file),
          target: relative(ROOT, resolve(dirname(file), `${match[1] ?? ""}.ts`)),
        })),
      )
      .filter(
        ({ target }) =>
          !target.startsWith("web/") && !target.startsWith("src/shared/") && !PAGE_MAY_READ.has(target) && !target.startsWith("gen/"),
      )
      .map(({ file, target }) => `${file} -> ${target}`);
    expect(offending).toEqual([]);
  });
});
