/** The package this code runs from: where it sits, and which version it is. */
import { existsSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package version, read once from package.json so the User-Agent and the
 * CLI never disagree with what was released. The file sits one level up from
 * src/ (tests) and two from dist/src/ (compiled) and dist/bin/ (bundled), hence the search.
 */
function readVersion(): string {
  for (const relative of ["../package.json", "../../package.json"]) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(new URL(relative, import.meta.url), "utf8"));
      if (
        typeof parsed === "object" &&
        parsed !== null &&
        "name" in parsed &&
        parsed.name === "sitediag" &&
        "version" in parsed &&
        typeof parsed.version === "string"
      ) {
        return parsed.version;
      }
    } catch {
      // not this level; try the next
    }
  }
  return "0.0.0";
}

export const VERSION = readVersion();
export const USER_AGENT = `sitediag/${VERSION} (site reachability diagnostics)`;

/**
 * The directory holding package.json, from a module of this package. Code
 * runs from src/ (tests, tsx), dist/src/ (compiled) or dist/bin/ (the bundled bin), so files that live
 * beside the package (gen/, the built page) are found by walking up instead
 * of counting levels.
 */
export function packageRoot(moduleUrl: string = import.meta.url): string {
  const start = dirname(fileURLToPath(moduleUrl));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(`${dir}/package.json`)) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}
