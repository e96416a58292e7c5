import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The directory holding package.json, from a module of this package. Code
 * runs from src/ (tests, tsx) or dist/src/ (compiled), so files that live
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
