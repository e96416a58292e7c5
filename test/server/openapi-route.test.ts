import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openApiDocumentJson } from "../../src/openapi/openapi-document.js";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";

describe("GET /openapi.json", () => {
  let service: ServeTestService;
  beforeAll(async () => {
    service = await startTestService({ as: "serve" });
  });
  afterAll(async () => {
    await service?.close();
  });

  it("serves the generated OpenAPI document as JSON, with no key", async () => {
    const response = await fetch(`${service.url}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    const text = await response.text();
    expect(text).toBe(openApiDocumentJson());
    const document = JSON.parse(text) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(["/api/v1/is-site-down", "/api/v1/redirect-check"]));
  });

  it("answers HEAD without a body and refuses POST with 405", async () => {
    const head = await fetch(`${service.url}/openapi.json`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get("content-length"))).toBe(Buffer.byteLength(openApiDocumentJson()));
    const post = await fetch(`${service.url}/openapi.json`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });
});
