import { describe, expect, it } from "vitest";
import { openApiDocumentJson } from "../../src/openapi/openapi-document.js";
import { createResponseValidator } from "../fixtures/response-validator.js";

type Json = Record<string, unknown>;

describe("the examples of the document", () => {
  const document = JSON.parse(openApiDocumentJson()) as {
    paths: Record<
      string,
      { get?: { responses: Record<string, { content?: Record<string, { examples?: Record<string, { value: unknown }> }> }> } }
    >;
  };
  const validator = createResponseValidator(openApiDocumentJson());
  const examples = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item.get?.responses["200"]?.content?.["application/json"]?.examples ?? {}).map(
      ([name, example]) => [path, name, example.value] as const,
    ),
  );

  it("show both operations with and without details", () => {
    expect(examples.map(([path, name]) => `${path} ${name}`)).toEqual([
      "/api/v1/is-site-down up",
      "/api/v1/is-site-down detailsExpiredCertificate",
      "/api/v1/is-site-down detailsChallenge",
      "/api/v1/redirect-check redirects",
      "/api/v1/redirect-check detailsMetaRefresh",
    ]);
  });

  it.each(examples)("%s %s is valid against its schema", (path, _name, value) => {
    expect(validator.body(path, 200, value)).toEqual([]);
  });

  it("every details field appears in some example", () => {
    const seen = new Set<string>();
    const walk = (value: unknown, prefix: string) => {
      if (Array.isArray(value)) return value.forEach((item) => walk(item, prefix));
      if (typeof value !== "object" || value === null) return;
      for (const [key, inner] of Object.entries(value as Json)) {
        seen.add(`${prefix}.${key}`);
        walk(inner, `${prefix}.${key}`);
      }
    };
    for (const [, , value] of examples) walk((value as { data: Json }).data["details"], "details");
    for (const field of [
      "code",
      "requests.tls.certificate.daysRemaining",
      "requests.tls.verifyError",
      "requests.failure.code",
      "proxy.kind",
      "clientRedirect.delaySeconds",
    ]) {
      expect(seen).toContain(`details.${field}`);
    }
  });
});
