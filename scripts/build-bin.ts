/**
 * Bundles the compiled CLI (dist/src, tsc's output) into dist/bin, the
 * package's `bin`: the entry, the probe thread's entry beside it
 * (src/runner/thread-start.ts finds it as `./diagnostic-thread.js` next to
 * itself), and one chunk per part loaded only when needed (each command, the
 * Redis store and fanout), all in one directory.
 *
 * Why: a process loading ~250 small ES modules spends most of its start in
 * Node's module loader (resolving, reading and linking each file), not in our
 * code. Measured on Node 20, `sitediag check` of a refused port: 0.42 CPU-s
 * from dist/src, 0.25 from this bundle (docs/benchmarks.md, issue 37); every
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
 * Leaves every package that is not published as an ES module to Node, by the
 * "type" of the package.json Node would load it from (the importer's own
 * node_modules first; each package.json read once), and every subpath of one.
 */
function commonJsPackagesStayExternal(): Plugin {
  const esmByManifest = new Map<string, boolean>();
  return {
    name: "commonjs-packages-stay-external",
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: /^[^./]/ }, (args) => {
        if (isBuiltin(args.path)) return undefined;
        const manifest = packageJsonOf(packageName(args.path), args.resolveDir);
        let esm = esmByManifest.get(manifest);
        if (esm === undefined) {
          esm = (JSON.parse(readFileSync(manifest, "utf8")) as { type?: unknown }).type === "module";
          esmByManifest.set(manifest, esm);
        }
        return esm ? undefined : { path: args.path, external: true };
      });
    },
  };
}

/** "@scope/name/sub" -> "@scope/name"; "name/sub" -> "name". */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] ?? specifier);
}

/** The package.json of an installed package, where Node would find the package from `fromDir`. */
function packageJsonOf(name: string, fromDir: string): string {
  const paths = createRequire(join(fromDir, "importer.js")).resolve.paths(name) ?? [];
  const found = paths.map((dir) => join(dir, name, "package.json")).find((file) => existsSync(file));
  if (found === undefined) throw new Error(`the bundle imports ${name} from ${fromDir}, where it is not installed`);
  return found;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const built = await buildBin();
  console.log(`CLI bundled in ${built.dir}`);
}
