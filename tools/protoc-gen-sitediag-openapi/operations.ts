import type { DescMessage, DescMethod } from "@bufbuild/protobuf";
import { deriveRoutes, type RouteRule } from "../../src/server/door/rest-route-rules.js";
import { commentText, firstSentence } from "./comments.js";
import { API_KEY_PARAMETER, ERROR_STATUSES, SECURITY_REQUIREMENT, responseHeaders } from "./http-contract.js";
import { componentRef, type JsonObject } from "./json-value.js";
import type { MessageSchemas } from "./message-schemas.js";
import { SUCCESS_EXAMPLES } from "./examples.js";
import type { Problem } from "./problem.js";
import type { ProtoOptions } from "./proto-options.js";

/** One REST route, as the server derives it (src/server/door/rest-route-rules.ts is the one reading of google.api.http). */
export type Route = RouteRule;

/** The routes of the given methods; methods without an http rule are not REST routes. */
export function findRoutes(methods: readonly DescMethod[], options: ProtoOptions): { routes: Route[]; problems: Problem[] } {
  const { routes, problems } = deriveRoutes(methods, (method) => options.httpRule(method));
  return { routes, problems: problems.map(({ rpc, problem }) => ({ element: rpc, rule: "unsupported-http-rule", reason: problem })) };
}

/** Envelope component names of one route, e.g. CheckSiteSuccess. */
export function envelopeNames(route: Route) {
  const base = route.method.name;
  return { meta: `${base}Meta`, success: `${base}Success`, failure: `${base}Failure` };
}

/** The envelope components of one route: meta, success and failure bodies (per NDJSON line, for a streaming route). */
export function envelopeSchemas(route: Route, version: string, schemas: MessageSchemas): JsonObject {
  const names = envelopeNames(route);
  const metaRef = componentRef("schemas", names.meta);
  if (route.streaming) return { ...lineSchemas(route, version, schemas), [names.meta]: metaSchema(route, version) };
  return {
    [names.meta]: {
      type: "object",
      description: `Which operation answered (${route.tool}) and the API version.`,
      required: ["tool", "version"],
      properties: { tool: { const: route.tool }, version: { const: version } },
      additionalProperties: false,
    },
    [names.success]: {
      type: "object",
      description: `A completed ${route.tool} diagnostic. A down site or broken chain is still a success: read data.`,
      required: ["ok", "data", "meta"],
      properties: { ok: { const: true }, data: unaryData(route.method.output, schemas), meta: metaRef },
      additionalProperties: false,
    },
    [names.failure]: {
      type: "object",
      description: `A request to ${route.tool} that produced no diagnostic result.`,
      required: ["ok", "error", "meta"],
      properties: { ok: { const: false }, error: componentRef("schemas", "ErrorDetail"), meta: metaRef },
      additionalProperties: false,
    },
  };
}

/**
 * A unary answer's data: the response message; for a response that can
 * carry `vantages` (a call naming vantages), either that or the shape the
 * REST door answers such a call with (server/rest/vantage-data.ts): the
 * input as given (the message's first field) and `vantages` alone.
 */
function unaryData(output: DescMessage, schemas: MessageSchemas): JsonObject {
  const vantages = output.fields.find((field) => field.name === "vantages");
  const [input] = output.fields;
  if (vantages?.fieldKind !== "message" || input === undefined) return schemas.refTo(output);
  return {
    oneOf: [
      schemas.refTo(output),
      {
        type: "object",
        description: "The answer of a call that named vantages: the input as given, and one entry per vantage with the verdict over them.",
        required: [input.jsonName, vantages.jsonName],
        properties: {
          [input.jsonName]: { type: "string", description: commentText(input) },
          [vantages.jsonName]: schemas.refTo(vantages.message),
        },
        additionalProperties: false,
      },
    ],
  };
}

/**
 * A streamed item's two line shapes: with a result, the single-URL
 * route's envelope (data is the item's `result` message) plus the item's
 * place and its other fields (a trace's expectation); without, the error
 * envelope plus its place.
 */
function lineSchemas(route: Route, version: string, schemas: MessageSchemas): JsonObject {
  const names = envelopeNames(route);
  const metaRef = componentRef("schemas", names.meta);
  const item = route.method.output;
  const result = item.fields.find((field) => field.name === "result")?.message;
  // A stream that is no batch (one call's events, from several vantages): each line is the envelope of one message.
  if (result === undefined) return eventLineSchemas(route, schemas);
  const place = {
    index: { type: "integer", minimum: 0, description: "Position of the item in the request." },
    url: { type: "string", description: "The URL as given." },
  };
  const extras: JsonObject = {};
  for (const field of item.fields) {
    if (field.oneof !== undefined && field.proto.proto3Optional !== true) continue;
    if (field.name === "index" || field.name === "url") continue;
    if (field.fieldKind === "message")
      extras[field.jsonName] = { anyOf: [schemas.refTo(field.message), { type: "null" }], description: commentText(field) };
  }
  return {
    [names.success]: {
      type: "object",
      description: `One NDJSON line: an item of the batch with its ${route.tool} result.`,
      required: ["ok", "data", "meta", "index", "url", ...Object.keys(extras)],
      properties: { ok: { const: true }, data: result === undefined ? {} : schemas.refTo(result), meta: metaRef, ...place, ...extras },
      additionalProperties: false,
    },
    [names.failure]: {
      type: "object",
      description:
        "One NDJSON line: an item with no result (an invalid or refused URL), or, with no index, the error that ended the stream.",
      required: ["ok", "error", "meta"],
      properties: { ok: { const: false }, error: componentRef("schemas", "ErrorDetail"), meta: metaRef, ...place },
      additionalProperties: false,
    },
  };
}

function eventLineSchemas(route: Route, schemas: MessageSchemas): JsonObject {
  const names = envelopeNames(route);
  const metaRef = componentRef("schemas", names.meta);
  return {
    [names.success]: {
      type: "object",
      description: `One NDJSON line: one message of the ${route.tool} stream.`,
      required: ["ok", "data", "meta"],
      properties: { ok: { const: true }, data: schemas.refTo(route.method.output), meta: metaRef },
      additionalProperties: false,
    },
    [names.failure]: {
      type: "object",
      description: "One NDJSON line: the error that ended the stream.",
      required: ["ok", "error", "meta"],
      properties: { ok: { const: false }, error: componentRef("schemas", "ErrorDetail"), meta: metaRef },
      additionalProperties: false,
    },
  };
}

function metaSchema(route: Route, version: string): JsonObject {
  return {
    type: "object",
    description: `Which operation answered (${route.tool}) and the API version.`,
    required: ["tool", "version"],
    properties: { tool: { const: route.tool }, version: { const: version } },
    additionalProperties: false,
  };
}

/** The operation of one route: a GET with query parameters, or a POST with a JSON body (answered as NDJSON when streaming). */
export function operation(route: Route, tag: string, schemas: MessageSchemas): JsonObject {
  const names = envelopeNames(route);
  const description = commentText(route.method);
  const success = route.streaming
    ? ndjsonResponse("The batch was charged and runs: one line per item, written as each completes.", responseHeaders(true, "never"), [
        names.success,
        names.failure,
      ])
    : response(
        "The diagnostic completed; the result is in data.",
        responseHeaders(true, "never"),
        names.success,
        SUCCESS_EXAMPLES[route.tool],
      );
  const responses: JsonObject = { "200": success };
  for (const error of ERROR_STATUSES) {
    const text = `${error.description} error.code is usually ${error.usualCode}.`;
    responses[error.status] = response(text, responseHeaders(error.usageHeaders, error.retryAfter), names.failure);
  }
  return {
    operationId: route.method.name,
    tags: [tag],
    summary: firstSentence(description),
    description,
    parameters: route.verb === "GET" ? [...requestParameters(route.method, schemas), API_KEY_PARAMETER] : [API_KEY_PARAMETER],
    ...(route.verb === "POST" ? { requestBody: requestBody(route.method.input, schemas) } : {}),
    security: SECURITY_REQUIREMENT,
    responses,
  };
}

function requestBody(input: DescMessage, schemas: MessageSchemas): JsonObject {
  return { required: true, content: { "application/json": { schema: schemas.requestSchema(input) } } };
}

function ndjsonResponse(description: string, headers: JsonObject | undefined, lineSchemaNames: readonly string[]): JsonObject {
  const content = { "application/x-ndjson": { schema: { oneOf: lineSchemaNames.map((name) => componentRef("schemas", name)) } } };
  return headers === undefined ? { description, content } : { description, headers, content };
}

// Every field of the request message is a query parameter under its proto
// name; a field without `optional` must be given (a repeated one never must).
function requestParameters(method: DescMethod, schemas: MessageSchemas): JsonObject[] {
  return method.input.fields.map((field) => ({
    name: field.name,
    in: "query",
    required: field.proto.proto3Optional !== true && field.fieldKind !== "list",
    description: commentText(field),
    schema: schemas.parameterSchema(field),
  }));
}

function response(description: string, headers: JsonObject | undefined, schemaName: string, examples?: JsonObject): JsonObject {
  const content = { "application/json": { schema: componentRef("schemas", schemaName), ...(examples === undefined ? {} : { examples }) } };
  return headers === undefined ? { description, content } : { description, headers, content };
}
