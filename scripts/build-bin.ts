/**
 * Bundles the compiled CLI (dist/src, tsc's output) into dist/bin, the
 * package's `bin`: the entry, the probe thread's entry beside it
 * (src/runner/thread-start.ts finds it as `./diagnostic-thread.js` next to
 * itself), and one chunk per part loaded only when needed (each command, the
 * Redis store and fanout), all in one directory.
 *
 * Why: a process loading ~250 small ES modules spends most of its start in
 * Node's module loader (resolving, reading and linking each file), not in our
 * code. Measured on Node 20, `sitediag check` of a refused port: 0.48 CPU-s
 * from dist/src, 0.32 from this bundle (docs/benchmarks.md, issue 37); every
 * CLI command and every `serve` start pays it, and the tests start over a
 * hundred of them per run.
 *
 * Packages published as ES modules are bundled; packages published as
 * CommonJS (pino, prom-client, tldts, ioredis, better-sqlite3's native
 * binding, ...) stay in node_modules and load as they do from dist/src:
 * bundled, their `require`, `__dirname` and native bindings would need
 * shims that nothing here tests. So the bundle needs the same installed
 * runtime dependencies as dist/src, and nothing more.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";

const ROOT = resolve(import.meta.dirname, "..");

/** The entries, by the name of their output file in dist/bin. */
const ENTRIES = {
  sitediag: join("src", "main.js"),
  "diagnostic-thread": join("src", "runner", "diagnostic-thread.js"),
} as const;

export interface BuiltBin {
  readonly dir: string;
  /** The CLI's entry module (the package's bin). */
  readonly main: string;
  /** The probe thread's entry module, beside it. */
  readonly thread: string;
}

/** Bundles `compiledDir` (tsc's output for tsconfig.build.json: src/, gen/ under it) into `outDir`. */
export async function buildBin(compiledDir: string = join(ROOT, "dist"), outDir: string = join(ROOT, "dist", "bin")): Promise<BuiltBin> {
  // Chunks are named by their hash: an earlier build's would stay beside this one's.
  rmSync(outDir, { recursive: true, force: true });
  await build({
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, join(compiledDir, file)])),
    outdir: outDir,
    entryNames: "[name]",
    // Flat beside the entries: a chunk that starts the probe thread finds ./diagnostic-thread.js next to itself.
    chunkNames: "[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20.19",
    sourcemap: true,
    plugins: [commonJsPackagesStayExternal()],
    logLevel: "warning",
  });
  return { dir: outDir, main: join(outDir, "sitediag.js"), thread: join(outDir, "diagnostic-thread.js") };
}

/**
 * Leaves every package that is not published as an ES module to Node, by its
 * package.json's "type" (read once per package), and every subpath of one.
 */
function commonJsPackagesStayExternal(): Plugin {
  const moduleTypes = new Map<string, boolean>();
  const require = createRequire(join(ROOT, "package.json"));
  const isEsm = (name: string): boolean => {
    let esm = moduleTypes.get(name);
    if (esm === undefined) {
      const manifest = JSON.parse(readFileSync(packageJsonOf(require, name), "utf8")) as { type?: unknown };
      esm = manifest.type === "module";
      moduleTypes.set(name, esm);
    }
    return esm;
  };
  return {
    name: "commonjs-packages-stay-external",
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: /^[^./]/ }, (args) => {
        if (isBuiltin(args.path)) return undefined;
        const name = packageName(args.path);
        return isEsm(name) ? undefined : { path: args.path, external: true };
      });
    },
  };
}

/** "@scope/name/sub" -> "@scope/name"; "name/sub" -> "name". */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] ?? specifier);
}

/** The package.json of an installed package, where Node would find the package from the project root. */
function packageJsonOf(require: NodeJS.Require, name: string): string {
  const found = (require.resolve.paths(name) ?? []).map((dir) => join(dir, name, "package.json")).find((file) => existsSync(file));
  if (found === undefined) throw new Error(`the bundle imports ${name}, which is not installed`);
  return found;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const built = await buildBin();
  console.log(`CLI bundled in ${built.dir}`);
}
