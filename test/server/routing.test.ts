import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../fixtures/service-harness.js";

describe("routing, CORS, 404 and 405", () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({
      exposeHeaders: ["x-test-usage"],
      plainRoutes: [{ path: "/plain", methods: ["GET"], handle: (_request, response) => void response.end("plain text") }],
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  it("answers a REST preflight with 204, no body, and the headers a browser needs", async () => {
    const response = await fetch(`${service.url}/api/v1/is-site-down`, {
      method: "OPTIONS",
      headers: { origin: "http://127.0.0.1:1", "access-control-request-method": "GET", "access-control-request-headers": "x-api-key" },
    });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-methods")).toBe("GET, OPTIONS");
    expect(response.headers.get("allow")).toBe("GET, OPTIONS");
    expect(response.headers.get("access-control-allow-headers")?.split(", ")).toEqual(
      expect.arrayContaining(["x-api-key", "connect-protocol-version", "x-grpc-web", "content-type"]),
    );
    expect(response.headers.get("access-control-max-age")).toBe("7200");
  });

  it("answers an RPC preflight allowing POST", async () => {
    const response = await fetch(`${service.url}/sitediag.v1.DiagnosticsService/CheckSite`, { method: "OPTIONS" });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-methods")).toBe("POST, GET, OPTIONS");
  });

  it("adds CORS headers to simple responses of the REST and RPC doors", async () => {
    const rest = await fetch(`${service.url}/api/v1/is-site-down?url=nope`);
    const rpc = await fetch(`${service.url}/sitediag.v1.DiagnosticsService/CheckSite`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    for (const response of [rest, rpc]) {
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(response.headers.get("access-control-expose-headers")?.split(", ")).toEqual(
        expect.arrayContaining(["retry-after", "x-test-usage", "grpc-status"]),
      );
    }
  });

  it("answers unknown paths under /api/ and elsewhere with a JSON 404", async () => {
    for (const path of ["/api/v1/nope", "/api/v2/is-site-down", "/"]) {
      const response = await fetch(`${service.url}${path}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({
        ok: false,
        error: { code: "not_found", message: `no route for GET ${path}` },
        meta: { tool: null, version: "v1" },
      });
    }
  });

  it("answers other methods on a REST route with 405 and Allow", async () => {
    for (const method of ["POST", "PUT", "DELETE", "HEAD"]) {
      const response = await fetch(`${service.url}/api/v1/redirect-check?url=x`, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("GET, OPTIONS");
      if (method !== "HEAD") {
        expect(await response.json()).toEqual({
          ok: false,
          error: { code: "unimplemented", message: "use GET" },
          meta: { tool: "redirect-check", version: "v1" },
        });
      }
    }
  });

  it("answers HEAD on the probes and 405 for other methods there", async () => {
    expect((await fetch(`${service.url}/healthz`, { method: "HEAD" })).status).toBe(200);
    const post = await fetch(`${service.url}/readyz`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("serves an application's plain route with CORS, a preflight and 405 for other methods", async () => {
    const get = await fetch(`${service.url}/plain`);
    expect([get.status, await get.text(), get.headers.get("access-control-allow-origin")]).toEqual([200, "plain text", "*"]);
    const preflight = await fetch(`${service.url}/plain`, { method: "OPTIONS" });
    expect([preflight.status, preflight.headers.get("access-control-allow-methods")]).toEqual([204, "GET, OPTIONS"]);
    const post = await fetch(`${service.url}/plain`, { method: "POST" });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET"]);
  });
});
