import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";

/**
 * Validates REST responses against the OpenAPI document with ajv's draft
 * 2020-12 dialect (the OpenAPI 3.1 schema dialect): the body against the
 * schema of its path and status, and the headers the document says are
 * always sent. Answers a list of problems; empty means valid.
 */
export interface ResponseValidator {
  body(path: string, status: number, body: unknown): string[];
  headers(path: string, status: number, headers: Headers): string[];
}

const DOCUMENT_ID = "sitediag-openapi.json";

export function createResponseValidator(documentJson: string): ResponseValidator {
  const document: unknown = JSON.parse(documentJson);
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  // The document's own formats; "int32" is checked, not just tolerated.
  ajv.addFormat("int32", { type: "number", validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addFormat("double", { type: "number", validate: (n: number) => Number.isFinite(n) });
  // The document's top-level fields are not JSON Schema keywords: declared as
  // annotations, strict mode still rejects any unknown keyword inside the
  // response schemas, which are compiled by pointer into the document.
  ajv.addVocabulary(Object.keys(asRecord(document, "document")));
  ajv.addSchema(asRecord(document, "document"), DOCUMENT_ID);

  function responseOf(path: string, status: number): Record<string, unknown> | string {
    const responses = dig(document, ["paths", path, "get", "responses"]);
    const response = responses === undefined ? undefined : dig(responses, [String(status)]);
    if (response === undefined) return `GET ${path} has no documented ${status} response`;
    return asRecord(response, `${path} ${status}`);
  }

  return {
    body(path, status, body) {
      const response = responseOf(path, status);
      if (typeof response === "string") return [response];
      const pointer = ["paths", path, "get", "responses", String(status), "content", "application/json", "schema"].map(escapePointer).join("/");
      const validate = ajv.getSchema(`${DOCUMENT_ID}#/${pointer}`);
      if (validate === undefined) return [`no JSON schema for GET ${path} ${status}`];
      return validate(body) ? [] : (validate.errors ?? []).map(describeError);
    },
    headers(path, status, headers) {
      const response = responseOf(path, status);
      if (typeof response === "string") return [response];
      const problems: string[] = [];
      for (const [name, spec] of Object.entries(asRecord(response.headers ?? {}, "headers"))) {
        const header = asRecord(spec, name);
        const value = headers.get(name);
        if (value === null) {
          if (header.required === true) problems.push(`missing header ${name}`);
          continue;
        }
        const schema = asRecord(header.schema, `${name} schema`);
        if (schema.type === "integer" && !/^\d+$/.test(value)) problems.push(`header ${name}: ${value} is not a non-negative integer`);
        if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) problems.push(`header ${name}: ${value} does not match ${schema.pattern}`);
      }
      return problems;
    },
  };
}

function describeError(error: ErrorObject): string {
  return `${error.instancePath || "(body)"} ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`;
}

function escapePointer(segment: string): string {
  return encodeURIComponent(segment.replaceAll("~", "~0").replaceAll("/", "~1"));
}

function dig(value: unknown, keys: readonly string[]): unknown {
  let current = value;
  for (const key of keys) {
    if (typeof current !== "object" || current === null || !(key in current)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function asRecord(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TypeError(`${what} is not a JSON object`);
  return value as Record<string, unknown>;
}
