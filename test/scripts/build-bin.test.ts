import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { basename, join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { BUILT_MAIN, sitediagArgs } from "../fixtures/built-sitediag.js";

/**
 * The package's bin is a bundle of the compiled CLI (scripts/build-bin.ts), built by this run's global setup
 * (test/fixtures/build-once.ts) as `npm run build` builds it. Every CLI and service test spawns it; these hold
 * what those cannot see: that it stands alone, leaves the CommonJS packages to node_modules, and still loads
 * each command's code only when that command runs.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "dist", "bin");
const run = promisify(execFile);

/** Every module specifier a bundled file imports statically or dynamically. */
function specifiersOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"([^"]+)"/g)].map((match) => match[1] ?? "");
}

/**
 * A loader hook that writes each file module the process loads to stderr, as `LOADED <url>`. Hooks run on a
 * thread of their own, whose process.stderr reaches the process's through the main thread, after a command
 * that exits at once has gone (Node 24 lost them): the line is written to the descriptor itself.
 */
const LOG_HOOKS = `data:text/javascript,${encodeURIComponent(
  'import { writeSync } from "node:fs"; export async function load(url, context, next) { if (url.startsWith("file:")) writeSync(2, `LOADED ${url}\\n`); return next(url, context); }',
)}`;
const REGISTER = `data:text/javascript,${encodeURIComponent(`import { register } from "node:module"; register(${JSON.stringify(LOG_HOOKS)});`)}`;

/** The files of dist/bin a `sitediag ARGS` run loads, by name. */
async function binFilesLoadedBy(...args: string[]): Promise<string[]> {
  const result = await run(process.execPath, ["--import", REGISTER, ...sitediagArgs(...args)], {
    env: { ...process.env, SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8" },
  }).catch((error: { stderr?: string }) => ({ stderr: error.stderr ?? "" }));
  return [...result.stderr.matchAll(/^LOADED (file:\S+)$/gm)]
    .map((match) => new URL(match[1] ?? "").pathname)
    .filter((path) => path.startsWith(`${BIN}/`))
    .map((path) => basename(path));
}

describe("the bundled bin (dist/bin)", () => {
  it("is what the package's bin names, with the probe thread's entry beside it", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { bin: Record<string, string> };
    expect(join(ROOT, manifest.bin.sitediag ?? "")).toBe(BUILT_MAIN);
    expect(readdirSync(BIN)).toEqual(expect.arrayContaining(["sitediag.js", "diagnostic-thread.js"]));
  });

  it("stands alone: imports only its own chunks, Node's modules, and CommonJS runtime dependencies", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    const built = readdirSync(BIN);
    const offending = built
      .filter((file) => file.endsWith(".js"))
      .flatMap((file) => specifiersOf(join(BIN, file)).map((specifier) => ({ file, specifier })))
      .filter(({ specifier }) => {
        if (specifier.startsWith("./")) return !built.includes(specifier.slice(2));
        if (specifier.startsWith("node:") || builtinModules.includes(specifier)) return false;
        const name = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : (specifier.split("/")[0] ?? "");
        if (!(name in manifest.dependencies)) return true;
        const { type } = JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as { type?: string };
        return type === "module";
      })
      .map(({ file, specifier }) => `${file} -> ${specifier}`);
    expect(offending).toEqual([]);
  });

  it("loads a command's code only when that command runs", async () => {
    const commandChunk = /^(serve|keys|check|trace|vantages)-\w+\.js$/;
    // Each command is a chunk of its own (one imported statically would be folded into the entry's code).
    const chunks = readdirSync(BIN).filter((file) => commandChunk.test(file));
    expect(chunks.map((file) => file.split("-")[0]).sort()).toEqual(["check", "keys", "serve", "trace", "vantages"]);
    const help = await binFilesLoadedBy("--help");
    expect(help).toContain("sitediag.js");
    expect(help.filter((file) => commandChunk.test(file))).toEqual([]);
    const check = await binFilesLoadedBy("check", "http://127.0.0.1:9/");
    expect(check.filter((file) => commandChunk.test(file)).map((file) => file.split("-")[0])).toEqual(["check"]);
  });

  it("answers as the compiled modules do", async () => {
    const args = ["check", "--json", "http://127.0.0.1:9/"];
    const env = { ...process.env, SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8" };
    const answer = (main: string) =>
      run(process.execPath, [main, ...args], { env }).catch((error: { code?: number; stdout?: string; stderr?: string }) => ({
        code: error.code,
        stdout: error.stdout,
        stderr: error.stderr,
      }));
    const [bundled, modules] = await Promise.all([answer(sitediagArgs()[0] ?? ""), answer(join(ROOT, "dist", "src", "main.js"))]);
    expect(bundled).toEqual(modules);
    // A refusal at input: the same words and exit code from both, with nothing timed in them.
    expect(bundled).toMatchObject({ code: 2, stdout: "" });
    expect(bundled.stderr).toContain("input_bad_port");
  });
});
