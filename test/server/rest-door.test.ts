import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { closedLoopbackPort, type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { createGate } from "../fixtures/gate-interceptor.js";

const SITE_CHECK_FIELDS = [
  "requestedUrl",
  "finalUrl",
  "status",
  "statusCode",
  "statusText",
  "responseTime",
  "reason",
  "failedStage",
  "redirectHops",
  "proxyBlocked",
];
const TRACE_FIELDS = ["input", "redirects", "finalUrl", "finalStatus", "totalTimeMs", "chainStatus", "chain", "warnings"];

interface Envelope {
  ok: boolean;
  data?: Record<string, unknown>;
  error?: { code: string; message: string };
  meta: { tool: string | null; version: string };
}

async function getJson(url: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: Envelope }> {
  const response = await fetch(url, init);
  expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
  return { status: response.status, headers: response.headers, body: (await response.json()) as Envelope };
}

describe("REST door against real diagnostics", () => {
  let targets: HttpTargets;
  let service: TestService;
  const gate = createGate((request) => {
    const usage = new Headers({ "x-test-credits-remaining": "298" });
    return request.header.get("x-api-key") === "refused" ? new ConnectError("API key is not valid", Code.Unauthenticated) : usage;
  });

  beforeAll(async () => {
    targets = await startHttpTargets({
      routes: {
        "/up": { kind: "respond", status: 200, body: "fine" },
        "/old": { kind: "redirect", status: 301, location: "/up" },
      },
    });
    service = await startTestService({ interceptors: [gate.interceptor], config: { tracePorts: [targets.httpPort] } });
  });
  afterAll(async () => {
    await service?.close();
    await targets?.close();
  });

  it("answers a completed is-site-down check with exactly ok, data and meta", async () => {
    const target = targets.url("/old");
    const { status, headers, body } = await getJson(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(target)}`, {
      headers: { "x-api-key": "k1" },
    });
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(["ok", "data", "meta"]);
    expect(body.ok).toBe(true);
    expect(body.meta).toEqual({ tool: "is-site-down", version: "v1" });
    expect(Object.keys(body.data ?? {})).toEqual(SITE_CHECK_FIELDS);
    expect(body.data).toMatchObject({
      requestedUrl: target,
      finalUrl: targets.url("/up"),
      status: "up",
      statusCode: 200,
      reason: null,
      failedStage: null,
      redirectHops: [{ url: target, status: 301 }],
      proxyBlocked: false,
    });
    expect(typeof body.data?.responseTime).toBe("number");
    // Usage headers an interceptor sets reach the REST response.
    expect(headers.get("x-test-credits-remaining")).toBe("298");
  });

  it("answers a target that refuses connections with 200, status down and the contract's nulls", async () => {
    const target = `http://127.0.0.1:${await closedLoopbackPort()}/`;
    const { status, body } = await getJson(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(target)}&api_key=k1`);
    expect(status).toBe(200);
    expect(body.data).toMatchObject({
      status: "down",
      failedStage: "connect",
      finalUrl: null,
      statusCode: null,
      statusText: null,
      responseTime: null,
      redirectHops: null,
    });
    expect(typeof body.data?.reason).toBe("string");
  });

  it("answers a redirect-check with the trace fields and meta.tool redirect-check", async () => {
    const target = targets.url("/old");
    const { status, body } = await getJson(`${service.url}/api/v1/redirect-check?url=${encodeURIComponent(target)}`, {
      headers: { "x-api-key": "k1" },
    });
    expect(status).toBe(200);
    expect(body.meta).toEqual({ tool: "redirect-check", version: "v1" });
    expect(Object.keys(body.data ?? {})).toEqual(TRACE_FIELDS);
    expect(body.data).toMatchObject({
      input: target,
      redirects: 1,
      chainStatus: "Redirects detected",
      finalUrl: targets.url("/up"),
      finalStatus: 200,
    });
    expect(body.data?.chain).toHaveLength(2);
    expect(Array.isArray(body.data?.warnings)).toBe(true);
  });

  it("passes api_key to the interceptors as x-api-key, the header winning when both are given", async () => {
    const target = encodeURIComponent(targets.url("/up"));
    const before = gate.visits.length;
    await getJson(`${service.url}/api/v1/is-site-down?url=${target}&api_key=from-query`);
    await getJson(`${service.url}/api/v1/is-site-down?url=${target}&api_key=from-query`, { headers: { "x-api-key": "from-header" } });
    expect(gate.visits.slice(before).map((visit) => [visit.door, visit.apiKey])).toEqual([
      ["rest", "from-query"],
      ["rest", "from-header"],
    ]);
  });

  it("rejects an invalid url with 400 invalid_argument after the interceptors ran (credits before validation)", async () => {
    const before = gate.visits.length;
    const { status, body } = await getJson(`${service.url}/api/v1/is-site-down?url=not-a-url`, { headers: { "x-api-key": "k1" } });
    expect(status).toBe(400);
    expect(body).toMatchObject({ ok: false, error: { code: "invalid_argument" }, meta: { tool: "is-site-down", version: "v1" } });
    expect(body.error?.message).not.toBe("");
    expect(gate.visits.length).toBe(before + 1);
  });

  it("rejects a missing url with 400", async () => {
    const { status, body } = await getJson(`${service.url}/api/v1/redirect-check`, { headers: { "x-api-key": "k1" } });
    expect(status).toBe(400);
    expect(body.error?.code).toBe("invalid_argument");
  });

  it("rejects a parameter given twice, after the interceptors ran, without probing either value", async () => {
    const before = { visits: gate.visits.length, requests: targets.requests.length };
    const first = encodeURIComponent(targets.url("/up"));
    const { status, body } = await getJson(`${service.url}/api/v1/is-site-down?url=${first}&url=${first}`, {
      headers: { "x-api-key": "k1" },
    });
    expect(status).toBe(400);
    expect(body.error).toEqual({ code: "invalid_argument", message: "query parameter url was given 2 times; give it once" });
    expect(gate.visits.length).toBe(before.visits + 1);
    expect(targets.requests.length).toBe(before.requests);
  });

  it("rejects api_key given twice without reaching the interceptors (no key to charge)", async () => {
    const before = gate.visits.length;
    const { status, body } = await getJson(`${service.url}/api/v1/is-site-down?url=x&api_key=a&api_key=b`);
    expect(status).toBe(400);
    expect(body.error?.code).toBe("invalid_argument");
    expect(gate.visits.length).toBe(before);
  });

  it("ignores parameters that name no field", async () => {
    const target = encodeURIComponent(targets.url("/up"));
    const { status, body } = await getJson(`${service.url}/api/v1/is-site-down?url=${target}&_=1712345678&utm_source=docs`, {
      headers: { "x-api-key": "k1" },
    });
    expect(status).toBe(200);
    expect(body.data?.status).toBe("up");
  });

  it("answers an interceptor's refusal with its code and status, like the Connect door", async () => {
    const target = encodeURIComponent(targets.url("/up"));
    const { status, body } = await getJson(`${service.url}/api/v1/is-site-down?url=${target}`, { headers: { "x-api-key": "refused" } });
    expect(status).toBe(401);
    expect(body).toEqual({
      ok: false,
      error: { code: "unauthenticated", message: "API key is not valid" },
      meta: { tool: "is-site-down", version: "v1" },
    });
    const client = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    const rpc = await client
      .checkSite({ url: targets.url("/up") }, { headers: { "x-api-key": "refused" } })
      .catch((error: unknown) => ConnectError.from(error));
    expect(rpc).toBeInstanceOf(ConnectError);
    expect((rpc as ConnectError).code).toBe(Code.Unauthenticated);
  });
});

describe("REST error mapping", () => {
  // Each Connect code an interceptor (or handler) may raise, and the HTTP status both doors use for it.
  const table: [Code, string, number][] = [
    [Code.InvalidArgument, "invalid_argument", 400],
    [Code.Unauthenticated, "unauthenticated", 401],
    [Code.PermissionDenied, "permission_denied", 403],
    [Code.ResourceExhausted, "resource_exhausted", 429],
    [Code.Internal, "internal", 500],
    [Code.Unknown, "unknown", 500],
    [Code.Unimplemented, "unimplemented", 501],
    [Code.Unavailable, "unavailable", 503],
    [Code.DeadlineExceeded, "deadline_exceeded", 504],
  ];
  let service: TestService;
  const gate = createGate((request) => {
    const code = Number(request.header.get("x-test-code"));
    const metadata = new Headers({ "retry-after": "120", "x-test-credits-remaining": "0" });
    return new ConnectError(`refused with ${Code[code]}`, code, metadata);
  });

  beforeAll(async () => {
    service = await startTestService({ interceptors: [gate.interceptor], exposeHeaders: ["x-test-credits-remaining"] });
  });
  afterAll(async () => {
    await service?.close();
  });

  it.each(table)("code %i renders as %s with HTTP %i, metadata headers copied and exposed to browsers", async (code, name, httpStatus) => {
    const response = await fetch(`${service.url}/api/v1/redirect-check?url=127.0.0.1`, {
      headers: { "x-api-key": "k", "x-test-code": String(code), origin: "http://127.0.0.1:1" },
    });
    expect(response.status).toBe(httpStatus);
    expect(await response.json()).toEqual({
      ok: false,
      error: { code: name, message: `refused with ${Code[code]}` },
      meta: { tool: "redirect-check", version: "v1" },
    });
    expect(response.headers.get("retry-after")).toBe("120");
    expect(response.headers.get("x-test-credits-remaining")).toBe("0");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    const exposed = (response.headers.get("access-control-expose-headers") ?? "").split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(["retry-after", "x-test-credits-remaining"]));
  });

  it.each(table)("the Connect door returns code %i with the same HTTP status and metadata", async (code, _name, httpStatus) => {
    const response = await fetch(`${service.url}/sitediag.v1.DiagnosticsService/TraceRedirects`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "k", "x-test-code": String(code) },
      body: JSON.stringify({ url: "127.0.0.1" }),
    });
    expect(response.status).toBe(httpStatus);
    expect(((await response.json()) as { code: string }).code).toBe(_name);
    expect(response.headers.get("retry-after")).toBe("120");
  });
});
