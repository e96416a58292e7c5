import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Where `buf generate` writes the document (buf.gen.yaml), relative to the
 * package root. tsc does not copy JSON into dist/, so the compiled server
 * reads the very same file as the tests.
 */
export const OPENAPI_DOCUMENT_PATH = join("gen", "openapi", "sitediag.openapi.json");

let cached: string | undefined;

/**
 * The OpenAPI 3.1 document of the REST routes, as the JSON text to serve at
 * GET /openapi.json. Read once, on first use; a missing file throws, which
 * at start-up means the package was installed without its gen/ folder.
 */
export function openApiDocumentJson(): string {
  cached ??= readFileSync(join(packageRoot(), OPENAPI_DOCUMENT_PATH), "utf8");
  return cached;
}

// This module runs from src/openapi/ (tests) or dist/src/openapi/ (compiled):
// walk up to the directory holding package.json instead of counting levels.
function packageRoot(): string {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${start}: cannot locate ${OPENAPI_DOCUMENT_PATH}`);
  }
}
