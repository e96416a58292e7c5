/**
 * Builds the page for people (web/) into dist/web, where `sitediag serve`
 * finds it: one bundled, minified script and one style sheet, each named
 * after a hash of its bytes (so the server may let caches keep them for a
 * year), and index.html naming them. Run by `npm run build`; tests call
 * buildPage() with their own directory.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const ROOT = resolve(import.meta.dirname, "..");
const WEB = join(ROOT, "web");

export interface BuiltPage {
  readonly dir: string;
  /** Served paths of the hashed files: script, style sheet, icon. */
  readonly assets: { readonly script: string; readonly style: string; readonly icon: string };
}

export async function buildPage(outDir: string = join(ROOT, "dist", "web")): Promise<BuiltPage> {
  rmSync(outDir, { recursive: true, force: true });
  const assetsDir = join(outDir, "assets");
  mkdirSync(assetsDir, { recursive: true });
  const result = await build({
    entryPoints: { app: join(WEB, "src", "main.ts"), style: join(WEB, "src", "page.css") },
    outdir: assetsDir,
    entryNames: "[name]-[hash]",
    bundle: true,
    minify: true,
    format: "esm",
    // Browsers of the last few years; the page uses nothing newer.
    target: ["es2022", "chrome110", "firefox110", "safari16"],
    platform: "browser",
    tsconfig: join(WEB, "tsconfig.json"),
    metafile: true,
    legalComments: "none",
    logLevel: "warning",
  });
  const outputs = Object.entries(result.metafile.outputs);
  const named = (entry: string) => {
    const found = outputs.find(([, output]) => output.entryPoint !== undefined && resolve(ROOT, output.entryPoint) === resolve(entry));
    if (found === undefined) throw new Error(`esbuild wrote no output for ${entry}`);
    return `/assets/${basename(found[0])}`;
  };
  const script = named(join(WEB, "src", "main.ts"));
  const style = named(join(WEB, "src", "page.css"));
  const iconBytes = readFileSync(join(WEB, "icon.svg"));
  const icon = `/assets/icon-${createHash("sha256").update(iconBytes).digest("hex").slice(0, 8)}.svg`;
  writeFileSync(join(outDir, icon), iconBytes);

  const template = readFileSync(join(WEB, "index.html"), "utf8");
  const html = template.replaceAll("%SCRIPT%", script).replaceAll("%STYLE%", style).replaceAll("%ICON%", icon);
  if (/%[A-Z]+%/.test(html)) throw new Error("web/index.html names a placeholder the build does not fill");
  writeFileSync(join(outDir, "index.html"), html);
  return { dir: outDir, assets: { script, style, icon } };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const built = await buildPage(process.argv[2] === undefined ? undefined : resolve(process.argv[2]));
  console.log(`page built in ${built.dir}: ${Object.values(built.assets).join(" ")}`);
}
