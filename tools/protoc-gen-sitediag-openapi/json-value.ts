/**
 * The JSON values the document is built from. The plugin emits JSON, not code,
 * so every builder returns plain data that JSON.stringify prints in insertion
 * order: the same proto always gives the same bytes.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** A JSON Schema (draft 2020-12, the OpenAPI 3.1 dialect) as plain data. */
export type JsonSchema = JsonObject;

/** A "$ref" to a reusable part of the document, by section and name. */
export function componentRef(section: "schemas" | "headers" | "responses", name: string): JsonObject {
  return { $ref: `#/components/${section}/${name}` };
}
