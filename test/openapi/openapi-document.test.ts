import { getOption, hasOption, ScalarType, type DescField, type DescMessage, type DescMethod } from "@bufbuild/protobuf";
import { Validator } from "@seriousme/openapi-schema-validator";
import { beforeAll, describe, expect, it } from "vitest";
import { http } from "../../gen/google/api/annotations_pb.js";
import { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { rest_null_when_empty, rest_omit_when_absent, rest_value } from "../../gen/sitediag/v1/options_pb.js";
import { API_VERSION } from "../../src/shared/limits.js";
import { openApiDocumentJson } from "../../src/openapi/openapi-document.js";
import { restRoutesOf } from "../../src/server/door/route-table.js";

// The document is checked against the runtime descriptors in gen/, read with
// the generated extensions: a second path to the same proto, independent of
// the plugin's own lookups.
type Json = Record<string, unknown>;
let document: Json;

beforeAll(() => {
  document = JSON.parse(openApiDocumentJson()) as Json;
});

function at(value: unknown, ...keys: string[]): unknown {
  let current = value;
  for (const key of keys) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Json)[key];
  }
  return current;
}

function componentOf(message: DescMessage): Json {
  return at(document, "components", "schemas", message.typeName) as Json;
}

describe("the served document", () => {
  it("is valid OpenAPI 3.1", async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(openApiDocumentJson()) as Json);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("would be rejected by the validator if its structure broke", async () => {
    const broken = JSON.parse(openApiDocumentJson()) as Json;
    delete broken.info;
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it("is read once and served as the same text", () => {
    expect(openApiDocumentJson()).toBe(openApiDocumentJson());
    expect(openApiDocumentJson().endsWith("}\n")).toBe(true);
  });

  it("offers both API-key schemes", () => {
    expect(at(document, "components", "securitySchemes")).toEqual({
      ApiKeyHeader: expect.objectContaining({ type: "apiKey", in: "header", name: "x-api-key" }),
      ApiKeyQuery: expect.objectContaining({ type: "apiKey", in: "query", name: "api_key" }),
    });
  });
});

const getRoutes = DiagnosticsService.methods.filter((method) => hasOption(method, http) && getOption(method, http).pattern.case === "get");

describe.each(getRoutes.map((method) => [method.name, method] as const))("the %s route", (_name, method) => {
  const path = getOption(method, http).pattern.value as string;
  const tool = path.split("/").at(-1);
  const operation = () => at(document, "paths", path, "get") as Json;

  it("is a GET at the google.api.http path, summarised from the proto comment", () => {
    expect(hasOption(method, http)).toBe(true);
    expect(operation().operationId).toBe(method.name);
    expect(operation().summary).toMatch(/\?$|\.$/);
    expect(String(operation().description)).toContain("credits");
  });

  it("takes url (required), details, vantages (a list), user_agent and api_key (optional) from the query, plus either key scheme", () => {
    expect(operation().parameters).toEqual([
      expect.objectContaining({ name: "url", in: "query", required: true, schema: { type: "string" } }),
      expect.objectContaining({ name: "details", in: "query", required: false, schema: { type: "boolean" } }),
      expect.objectContaining({ name: "vantages", in: "query", required: false, schema: { type: "array", items: { type: "string" } } }),
      expect.objectContaining({
        name: "user_agent",
        in: "query",
        required: false,
        schema: { type: "string", enum: ["browser", "googlebot", "bingbot"] },
      }),
      expect.objectContaining({ name: "api_key", in: "query", required: false }),
    ]);
    expect(operation().security).toEqual([{ ApiKeyHeader: [] }, { ApiKeyQuery: [] }]);
  });

  it("answers 200 and every error status, with usage headers on 200 and 429", () => {
    const responses = operation().responses as Json;
    expect(Object.keys(responses)).toEqual(["200", "400", "401", "429", "500", "501", "503"]);
    const usage = ["RateLimit-Policy", "RateLimit", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Used", "X-RateLimit-Reset"];
    expect(Object.keys(at(responses, "200", "headers") as Json)).toEqual(usage);
    expect(Object.keys(at(responses, "429", "headers") as Json)).toEqual([...usage, "Retry-After"]);
    expect(Object.keys(at(responses, "503", "headers") as Json)).toEqual(["Retry-After"]);
    expect(at(responses, "401", "headers")).toBeUndefined();
  });

  it("wraps the response message in the envelope with this route's meta", () => {
    const successRef = at(operation(), "responses", "200", "content", "application/json", "schema", "$ref") as string;
    const success = at(document, ...successRef.slice(2).split("/")) as Json;
    expect(at(success, "properties", "ok")).toEqual({ const: true });
    // The contract's answer, or, for a call that named vantages, its input and `vantages` alone.
    const [input] = method.output.fields;
    expect(at(success, "properties", "data")).toEqual({
      oneOf: [
        { $ref: `#/components/schemas/${method.output.typeName}` },
        expect.objectContaining({ required: [input?.jsonName, "vantages"], additionalProperties: false }) as Json,
      ],
    });
    const meta = at(document, ...(at(success, "properties", "meta", "$ref") as string).slice(2).split("/"));
    expect(at(meta, "properties")).toEqual({ tool: { const: tool }, version: { const: API_VERSION } });
  });
});

const isVantageStream = (method: DescMethod) => method.name.startsWith("Vantage");

describe.each(
  DiagnosticsService.methods
    .filter((method) => method.methodKind === "server_streaming" && !isVantageStream(method))
    .map((method) => [method.name, method] as const),
)("the %s batch route", (_name, method) => {
  const path = getOption(method, http).pattern.value as string;
  const operation = () => at(document, "paths", path, "post") as Json;
  const component = (name: string) => at(document, "components", "schemas", name) as Json;

  it("is a POST with the request message as its JSON body, answered as NDJSON lines of the envelope", () => {
    expect(path).toMatch(/^\/api\/v1\/batch\//);
    expect(operation().operationId).toBe(method.name);
    const body = at(operation(), "requestBody", "content", "application/json", "schema") as Json;
    expect(Object.keys(body.properties as Json)).toEqual(method.input.fields.map((field) => field.jsonName));
    expect(body.additionalProperties).toBe(false);
    const lines = at(operation(), "responses", "200", "content", "application/x-ndjson", "schema", "oneOf") as Json[];
    expect(lines.map((line) => line.$ref)).toEqual([
      `#/components/schemas/${method.name}Success`,
      `#/components/schemas/${method.name}Failure`,
    ]);
    const result = method.output.fields.find((field) => field.name === "result")?.message;
    expect(at(component(`${method.name}Success`), "properties", "data")).toEqual({
      $ref: `#/components/schemas/${result?.typeName ?? ""}`,
    });
    expect(at(component(`${method.name}Success`), "properties", "index")).toMatchObject({ type: "integer" });
    expect(at(component(`${method.name}Failure`), "properties", "error")).toEqual({ $ref: "#/components/schemas/ErrorDetail" });
  });
});

describe.each(DiagnosticsService.methods.filter(isVantageStream).map((method) => [method.name, method] as const))(
  "the %s stream route",
  (_name, method) => {
    const path = getOption(method, http).pattern.value as string;
    const operation = () => at(document, "paths", path, "post") as Json;
    const component = (name: string) => at(document, "components", "schemas", name) as Json;

    it("is a POST of the request message, answered as NDJSON lines each holding one message of the stream", () => {
      expect(path).toMatch(/^\/api\/v1\/vantages\//);
      expect(operation().operationId).toBe(method.name);
      const lines = at(operation(), "responses", "200", "content", "application/x-ndjson", "schema", "oneOf") as Json[];
      expect(lines.map((line) => line.$ref)).toEqual([
        `#/components/schemas/${method.name}Success`,
        `#/components/schemas/${method.name}Failure`,
      ]);
      expect(component(`${method.name}Success`).required).toEqual(["ok", "data", "meta"]);
      expect(at(component(`${method.name}Success`), "properties", "data")).toEqual({
        $ref: `#/components/schemas/${method.output.typeName}`,
      });
    });
  },
);

describe("one route derivation", () => {
  it("documents exactly the routes the server serves, verb and path", () => {
    const served = restRoutesOf([DiagnosticsService]).map((route) => `${route.verb} ${route.path}`);
    const documented = Object.entries(document.paths as Json).flatMap(([path, operations]) =>
      Object.keys(operations as Json).map((verb) => `${verb.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(served.sort());
  });
});

describe("data schemas follow the message descriptors", () => {
  const messages = new Map<string, DescMessage>();
  const reach = (message: DescMessage): void => {
    if (messages.has(message.typeName)) return;
    messages.set(message.typeName, message);
    for (const field of message.fields) if (field.message !== undefined) reach(field.message);
  };
  // The data of every route: a unary method's response, and a batch item's result and expectation (its error is ErrorDetail).
  for (const method of getRoutes) reach(method.output);
  for (const method of DiagnosticsService.methods.filter((candidate) => candidate.methodKind === "server_streaming")) {
    for (const field of method.output.fields) if (field.message !== undefined && field.name !== "error") reach(field.message);
  }

  it.each([...messages.entries()])("%s: every field required by JSON name, nothing else", (_name, message) => {
    const schema = componentOf(message);
    // A field the REST door leaves out when unset (details) is the one that is not required.
    expect(schema.required).toEqual(message.fields.filter((f) => !hasOption(f, rest_omit_when_absent)).map((f) => f.jsonName));
    expect(Object.keys(schema.properties as Json)).toEqual(message.fields.map((f) => f.jsonName));
    expect(schema.additionalProperties).toBe(false);
  });

  const fields = [...messages.values()].flatMap((message) =>
    message.fields.map((field) => [`${message.name}.${field.jsonName}`, field] as const),
  );

  it.each(fields)("%s: type and nullability", (_name, field: DescField) => {
    const property = at(componentOf(field.parent), "properties", field.jsonName) as Json;
    const types = [property.type].flat();
    expect(types.includes("null")).toBe(
      field.proto.proto3Optional === true || (field.fieldKind === "list" && hasOption(field, rest_null_when_empty)),
    );
    if (field.fieldKind === "list") {
      expect(types[0]).toBe("array");
      if (field.listKind === "message") expect(property.items).toEqual({ $ref: `#/components/schemas/${field.message.typeName}` });
    } else if (field.fieldKind === "enum") {
      const publicValues = field.enum.values.filter((v) => hasOption(v, rest_value)).map((v) => getOption(v, rest_value));
      expect(publicValues.length).toBe(field.enum.values.length - 1);
      expect(property.enum).toEqual(field.proto.proto3Optional ? [...publicValues, null] : publicValues);
    } else if (field.fieldKind === "scalar") {
      const jsonTypes: Partial<Record<ScalarType, string>> = {
        [ScalarType.STRING]: "string",
        [ScalarType.BOOL]: "boolean",
        [ScalarType.INT32]: "integer",
        [ScalarType.DOUBLE]: "number",
      };
      expect(types[0]).toBe(jsonTypes[field.scalar]);
    }
    expect(property.description).not.toBe("");
  });

  it("uses the spec's strings for every enumerated value", () => {
    const values = (message: DescMessage, field: string) => at(componentOf(message), "properties", field, "enum");
    const [checkSite, traceRedirects] = DiagnosticsService.methods.map((m) => m.output) as [DescMessage, DescMessage];
    expect(values(checkSite, "status")).toEqual(["up", "down"]);
    expect(values(checkSite, "failedStage")).toEqual(["dns", "connect", "tls", "http", null]);
    expect(values(traceRedirects, "chainStatus")).toEqual([
      "Healthy",
      "Redirects detected",
      "Redirect loop",
      "Too many redirects",
      "Request failed",
      "Timeout",
    ]);
  });
});
