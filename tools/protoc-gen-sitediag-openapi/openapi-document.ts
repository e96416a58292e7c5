import type { DescFile, DescService } from "@bufbuild/protobuf";
import { commentText } from "./comments.js";
import { ERROR_DETAIL_SCHEMA, INTRODUCTION, SECURITY_REQUIREMENT, SECURITY_SCHEMES } from "./http-contract.js";
import type { JsonObject } from "./json-value.js";
import { createMessageSchemas } from "./message-schemas.js";
import { envelopeSchemas, findRoutes, operation } from "./operations.js";
import type { Problem } from "./problem.js";
import type { ProtoOptions } from "./proto-options.js";

export type DocumentResult = { ok: true; document: JsonObject } | { ok: false; problems: readonly Problem[] };

/**
 * The OpenAPI 3.1 document of every google.api.http route declared in the
 * given files: services without such routes (health, reflection) are left out.
 */
export function buildOpenApiDocument(files: readonly DescFile[], options: ProtoOptions): DocumentResult {
  const schemas = createMessageSchemas(options);
  const problems: Problem[] = [];
  const paths: JsonObject = {};
  const envelopes: JsonObject = {};
  const tags: JsonObject[] = [];
  const versions = new Set<string>();

  for (const service of files.flatMap((file) => file.services)) {
    const found = findRoutes(service.methods, options);
    problems.push(...found.problems);
    if (found.routes.length === 0) continue;
    const version = apiVersion(service);
    if (version === undefined) {
      problems.push({
        element: service.typeName,
        rule: "missing-version-in-package",
        reason: `package ${service.file.proto.package} does not end in a version such as v1`,
      });
      continue;
    }
    versions.add(version);
    tags.push({ name: service.name, description: commentText(service) });
    for (const route of found.routes) {
      const verb = route.verb.toLowerCase();
      const existing = paths[route.path];
      if (existing !== undefined && typeof existing === "object" && existing !== null && verb in existing) {
        problems.push({
          element: `${service.typeName}.${route.method.name}`,
          rule: "unsupported-http-rule",
          reason: `${route.path} is already served by another method`,
        });
        continue;
      }
      paths[route.path] = {
        ...(typeof existing === "object" && existing !== null ? existing : {}),
        [verb]: operation(route, service.name, schemas),
      };
      Object.assign(envelopes, envelopeSchemas(route, version, schemas));
    }
  }
  problems.push(...schemas.problems());
  if (problems.length > 0) return { ok: false, problems };

  return {
    ok: true,
    document: {
      openapi: "3.1.0",
      info: {
        title: "sitediag REST API",
        version: [...versions].join(", "),
        description: INTRODUCTION,
      },
      tags,
      security: SECURITY_REQUIREMENT,
      paths,
      components: {
        schemas: { ...envelopes, ErrorDetail: ERROR_DETAIL_SCHEMA, ...schemas.components() },
        securitySchemes: SECURITY_SCHEMES,
      },
    },
  };
}

// The API version label is the package's version suffix (sitediag.v1 -> v1),
// the same label the REST door reports as meta.version.
function apiVersion(service: DescService): string | undefined {
  const last = service.file.proto.package.split(".").at(-1) ?? "";
  return /^v\d+((alpha|beta)\d*)?$/.test(last) ? last : undefined;
}
