import type { DescMethod } from "@bufbuild/protobuf";
import { commentText, firstSentence } from "./comments.js";
import { API_KEY_PARAMETER, ERROR_STATUSES, SECURITY_REQUIREMENT, responseHeaders } from "./http-contract.js";
import { componentRef, type JsonObject } from "./json-value.js";
import type { MessageSchemas } from "./message-schemas.js";
import type { Problem } from "./problem.js";
import type { ProtoOptions } from "./proto-options.js";

/** One REST route: a method with a google.api.http GET rule. */
export interface Route {
  readonly method: DescMethod;
  readonly path: string;
  /** Last path segment, which the REST door reports as meta.tool. */
  readonly tool: string;
}

/** The routes of the given methods; methods without an http rule are not REST routes. */
export function findRoutes(methods: readonly DescMethod[], options: ProtoOptions): { routes: Route[]; problems: Problem[] } {
  const routes: Route[] = [];
  const problems: Problem[] = [];
  for (const method of methods) {
    const rule = options.httpRule(method);
    if (rule === undefined) continue;
    const element = `${method.parent.typeName}.${method.name}`;
    if (rule.pattern.case !== "get") {
      problems.push({ element, rule: "unsupported-http-rule", reason: `the REST door serves GET only, found ${rule.pattern.case ?? "no pattern"}` });
      continue;
    }
    const path = rule.pattern.value;
    // Query parameters only (spec §4): a template variable or a body would
    // need a second mapping the REST door does not implement.
    if (path.includes("{") || rule.body !== "" || rule.additionalBindings.length > 0) {
      problems.push({ element, rule: "unsupported-http-rule", reason: `path templates, bodies and additional bindings are not served (${path})` });
      continue;
    }
    routes.push({ method, path, tool: path.split("/").filter((s) => s !== "").at(-1) ?? path });
  }
  return { routes, problems };
}

/** Envelope component names of one route, e.g. CheckSiteSuccess. */
export function envelopeNames(route: Route) {
  const base = route.method.name;
  return { meta: `${base}Meta`, success: `${base}Success`, failure: `${base}Failure` };
}

/** The envelope components of one route: meta, success and failure bodies. */
export function envelopeSchemas(route: Route, version: string, schemas: MessageSchemas): JsonObject {
  const names = envelopeNames(route);
  const metaRef = componentRef("schemas", names.meta);
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
      properties: { ok: { const: true }, data: schemas.refTo(route.method.output), meta: metaRef },
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

/** The GET operation of one route. */
export function operation(route: Route, tag: string, schemas: MessageSchemas): JsonObject {
  const names = envelopeNames(route);
  const description = commentText(route.method);
  const responses: JsonObject = {
    "200": response("The diagnostic completed; the result is in data.", responseHeaders(true, "never"), names.success),
  };
  for (const error of ERROR_STATUSES) {
    const text = `${error.description} error.code is usually ${error.usualCode}.`;
    responses[error.status] = response(text, responseHeaders(error.usageHeaders, error.retryAfter), names.failure);
  }
  return {
    operationId: route.method.name,
    tags: [tag],
    summary: firstSentence(description),
    description,
    parameters: [...requestParameters(route.method, schemas), API_KEY_PARAMETER],
    security: SECURITY_REQUIREMENT,
    responses,
  };
}

// Every field of the request message is a query parameter under its proto
// name; a field without `optional` must be given.
function requestParameters(method: DescMethod, schemas: MessageSchemas): JsonObject[] {
  return method.input.fields.map((field) => ({
    name: field.name,
    in: "query",
    required: field.proto.proto3Optional !== true,
    description: commentText(field),
    schema: schemas.parameterSchema(field),
  }));
}

function response(description: string, headers: JsonObject | undefined, schemaName: string): JsonObject {
  const content = { "application/json": { schema: componentRef("schemas", schemaName) } };
  return headers === undefined ? { description, content } : { description, headers, content };
}
