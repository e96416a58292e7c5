import { readFileSync } from "node:fs";

/**
 * The package version, read once from package.json so the User-Agent and the
 * CLI never disagree with what was released. The file sits two levels up both
 * from src/ (tests) and from dist/src/ (compiled), hence the search.
 */
function readVersion(): string {
  for (const relative of ["../package.json", "../../package.json"]) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(new URL(relative, import.meta.url), "utf8"));
      if (typeof parsed === "object" && parsed !== null && "name" in parsed && parsed.name === "sitediag" && "version" in parsed && typeof parsed.version === "string") {
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
