import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckSiteResponseSchema, DiagnosticsService, TraceRedirectsResponseSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { renderMessage } from "../../src/server/rest/rest-render.js";
import { type HttpTargets, closedLoopbackPort, startHttpTargets } from "../fixtures/http-targets.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";

let targets: HttpTargets;
let service: TestService;

beforeAll(async () => {
  targets = await startHttpTargets({
    routes: {
      "/old": { kind: "redirect", status: 301, location: "/page" },
      "/page": {
        kind: "respond",
        status: 200,
        headers: { "content-type": "text/html", "cf-ray": "8a1b2c3d4e5f6789-AMS" },
        body: '<meta http-equiv="refresh" content="1; url=/next">',
      },
      "/challenge": { kind: "respond", status: 403, headers: { "cf-ray": "8a1b2c3d4e5f6789-AMS", "cf-mitigated": "challenge" } },
    },
  });
  service = await startTestService({ config: { tracePorts: [targets.httpPort] } });
});

afterAll(async () => {
  await service?.close();
  await targets?.close();
});

/** Times are measured per call, and so is a response's Date; everything else must agree between doors. */
function untimed(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(untimed);
  if (value === null || typeof value !== "object") return value;
  if (typeof value["name"] === "string" && value["name"].toLowerCase() === "date" && typeof value["value"] === "string")
    return { name: value["name"], value: "date" };
  const out: JsonObject = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = /Ms$|^responseTime$|^totalTimeMs$|^elapsedMs$/.test(key) && typeof inner === "number" ? "number" : untimed(inner);
  }
  return out;
}

/** The names of a request's response header fields, as the JSON answer lists them. */
function headerNames(request: JsonValue | undefined): string[] {
  const fields = request !== null && typeof request === "object" && !Array.isArray(request) ? request["responseHeaders"] : undefined;
  return Array.isArray(fields)
    ? fields.map((field) => (field !== null && typeof field === "object" && !Array.isArray(field) ? String(field["name"]) : ""))
    : [];
}

async function rest(tool: string, url: string, details: boolean): Promise<JsonObject> {
  const response = await fetch(`${service.url}/api/v1/${tool}?url=${encodeURIComponent(url)}${details ? "&details=true" : ""}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: JsonObject }).data;
}

const doors: [string, () => Transport][] = [
  ["Connect JSON", () => createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" })],
  ["Connect binary", () => createConnectTransport({ baseUrl: service.url, httpVersion: "1.1", useBinaryFormat: true })],
  ["gRPC", () => createGrpcTransport({ baseUrl: service.url })],
  ["gRPC-Web", () => createGrpcWebTransport({ baseUrl: service.url, httpVersion: "1.1" })],
];

describe("details through REST", () => {
  it("is-site-down: absent without details=true, present with it", async () => {
    const plain = await rest("is-site-down", targets.url("/old"), false);
    expect("details" in plain).toBe(false);
    const data = await rest("is-site-down", targets.url("/old"), true);
    expect(Object.keys(data).at(-1)).toBe("details");
    // Each answered request's header fields, as received, in order; checked on their own below.
    const requests = (data["details"] as JsonObject)["requests"] as JsonObject[];
    expect(headerNames(requests[0])).toEqual(expect.arrayContaining(["location", "Date"]));
    expect((requests[0]?.["responseHeaders"] as JsonObject[]).find((field) => field["name"] === "location")).toEqual({
      name: "location",
      value: "/page",
    });
    expect(headerNames(requests[1]).length).toBeGreaterThan(0);
    expect(requests.map((request) => request["responseHeadersTruncated"])).toEqual([false, false]);
    for (const request of requests) {
      delete request["responseHeaders"];
      delete request["responseHeadersTruncated"];
    }
    expect(untimed(data["details"] ?? null)).toEqual({
      code: null,
      requests: [
        {
          url: targets.url("/old"),
          method: "GET",
          headFallback: false,
          remoteAddress: "127.0.0.1",
          ipFamily: 4,
          httpVersion: "1.1",
          status: 301,
          timings: {
            dnsMs: null,
            connectMs: "number",
            tlsMs: null,
            firstByteMs: "number",
            totalMs: "number",
            waitingMs: "number",
            receivingMs: "number",
            otherMs: "number",
          },
          tls: null,
          failure: null,
          connectionReused: false,
          transportSecurity: null,
          // An IP-address host: nothing was resolved.
          resolution: null,
        },
        {
          url: targets.url("/page"),
          method: "GET",
          headFallback: false,
          remoteAddress: "127.0.0.1",
          ipFamily: 4,
          httpVersion: "1.1",
          status: 200,
          // Same origin, a keep-alive server: the redirect's connection carried this request.
          timings: {
            dnsMs: null,
            connectMs: null,
            tlsMs: null,
            firstByteMs: "number",
            totalMs: "number",
            waitingMs: "number",
            receivingMs: "number",
            otherMs: "number",
          },
          tls: null,
          failure: null,
          connectionReused: true,
          transportSecurity: null,
          // An IP-address host: nothing was resolved.
          resolution: null,
        },
      ],
      proxy: { provider: "cloudflare", kind: "unknown" },
      clientRedirect: { kind: "meta_refresh", url: targets.url("/next"), delaySeconds: 1 },
      families: null,
      addresses: null,
      tlsVersions: null,
      warnings: [],
      resolutions: [],
      search: { noindex: null, canonical: null, redirectToHome: false, soft404: null, bodyRead: true },
      // An IP-address host has no registrable domain: no RDAP lookup.
      registration: null,
    });
  });

  it("is-site-down: a down check carries its code and the failed request", async () => {
    const port = await closedLoopbackPort();
    const data = await rest("is-site-down", `http://127.0.0.1:${port}/`, true);
    expect(untimed(data["details"] ?? null)).toEqual({
      code: "connect_refused",
      requests: [
        {
          url: `http://127.0.0.1:${port}/`,
          method: "GET",
          headFallback: false,
          remoteAddress: "127.0.0.1",
          ipFamily: 4,
          httpVersion: null,
          status: null,
          timings: {
            dnsMs: null,
            connectMs: "number",
            tlsMs: null,
            firstByteMs: null,
            totalMs: "number",
            waitingMs: null,
            receivingMs: null,
            otherMs: "number",
          },
          tls: null,
          failure: { stage: "connect", code: "connect_refused", reason: "Connection refused", timedOut: false, elapsedMs: "number" },
          connectionReused: false,
          // No response, no fields.
          responseHeaders: [],
          responseHeadersTruncated: false,
          transportSecurity: null,
          // An IP-address host: nothing was resolved.
          resolution: null,
        },
      ],
      proxy: null,
      clientRedirect: null,
      families: null,
      addresses: null,
      tlsVersions: null,
      warnings: [],
      resolutions: [],
      // No answer: nothing for search engines.
      search: null,
      // An IP-address host has no registrable domain: no RDAP lookup.
      registration: null,
    });
  });

  it("redirect-check: absent without details=true, present with it, with the warning", async () => {
    const plain = await rest("redirect-check", targets.url("/old"), false);
    expect("details" in plain).toBe(false);
    expect(plain["warnings"]).toEqual([]);
    const data = await rest("redirect-check", targets.url("/old"), true);
    expect(data["warnings"]).toMatchObject([{ code: "client_side_redirect_not_followed", hop: 2 }]);
    expect(data["details"]).toMatchObject({
      code: null,
      requests: [
        { url: targets.url("/old"), method: "HEAD", status: 301 },
        { url: targets.url("/page"), method: "HEAD", status: 200 },
        { url: targets.url("/page"), method: "GET", status: 200 },
      ],
      proxy: { provider: "cloudflare", kind: "unknown" },
      clientRedirect: { kind: "meta_refresh", url: targets.url("/next"), delaySeconds: 1 },
    });
  });
});

describe("the same details through Connect, gRPC and gRPC-Web", () => {
  it.each(doors)("%s: CheckSite", async (_label, transport) => {
    const client = createClient(DiagnosticsService, transport());
    for (const path of ["/old", "/challenge"]) {
      const url = targets.url(path);
      const viaRest = await rest("is-site-down", url, true);
      const viaRpc = renderMessage(CheckSiteResponseSchema, await client.checkSite({ url, details: true }));
      expect(untimed(viaRpc)).toEqual(untimed(viaRest));
      const plain = await client.checkSite({ url });
      expect(plain.details).toBeUndefined();
    }
  });

  it.each(doors)("%s: TraceRedirects", async (_label, transport) => {
    const client = createClient(DiagnosticsService, transport());
    const url = targets.url("/old");
    const viaRest = await rest("redirect-check", url, true);
    const viaRpc = renderMessage(TraceRedirectsResponseSchema, await client.traceRedirects({ url, details: true }));
    expect(untimed(viaRpc)).toEqual(untimed(viaRest));
    expect((viaRpc["details"] as JsonObject | undefined)?.["proxy"]).toEqual({ provider: "cloudflare", kind: "unknown" });
    expect((await client.traceRedirects({ url })).details).toBeUndefined();
  });
});
