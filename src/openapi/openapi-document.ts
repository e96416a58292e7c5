import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../package-info.js";

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
