import { type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckSiteResponseSchema, DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { renderMessage } from "../../src/server/rest/rest-render.js";
import { type HttpTargets, closedLoopbackPort, startHttpTargets } from "../fixtures/http-targets.js";
import { type TestService, startTestService } from "../fixtures/service-harness.js";
import { createTestEnv, runnerOf } from "../fixtures/test-env.js";

let targets: HttpTargets;
let server: TestService;

beforeAll(async () => {
  targets = await startHttpTargets({
    routes: {
      "/start": { kind: "redirect", status: 301, location: "/home" },
      "/home": { kind: "respond", status: 200 },
      "/blocked": { kind: "respond", status: 403, headers: { "cf-ray": "8a1b2c3d4e5f6789-AMS" } },
      "/broken": { kind: "respond", status: 503 },
    },
  });
  server = await startTestService({ runner: () => runnerOf(createTestEnv({ siteTimeoutMs: 2_000 })), shutdownGraceMs: 1_000 });
});

afterAll(async () => {
  await server.close();
  await targets.close();
});

async function rest(url: string): Promise<{ status: number; body: JsonObject }> {
  const response = await fetch(`${server.url}/api/v1/is-site-down?url=${encodeURIComponent(url)}`);
  return { status: response.status, body: (await response.json()) as JsonObject };
}

/** responseTime is measured per call, so two calls differ there and only there. */
function withoutTime(data: unknown): unknown {
  return { ...(data as JsonObject), responseTime: typeof (data as JsonObject).responseTime };
}

describe("is-site-down through the REST door: exact envelope", () => {
  it("an up result after a redirect", async () => {
    const { status, body } = await rest(targets.url("/start"));
    expect(status).toBe(200);
    const data = body.data as JsonObject;
    expect(Number.isInteger(data.responseTime)).toBe(true);
    expect(JSON.stringify({ ...body, data: { ...data, responseTime: 0 } })).toBe(
      JSON.stringify({
        ok: true,
        data: {
          requestedUrl: targets.url("/start"),
          finalUrl: targets.url("/home"),
          status: "up",
          statusCode: 200,
          statusText: "OK",
          responseTime: 0,
          reason: null,
          failedStage: null,
          redirectHops: [{ url: targets.url("/start"), status: 301 }],
          proxyBlocked: false,
        },
        meta: { tool: "is-site-down", version: "v1" },
      }),
    );
  });

  it("a down result with nothing received: every null in place", async () => {
    const port = await closedLoopbackPort();
    const url = `http://127.0.0.1:${port}/`;
    const { status, body } = await rest(url);
    expect(status).toBe(200);
    expect(JSON.stringify(body)).toBe(
      JSON.stringify({
        ok: true,
        data: {
          requestedUrl: url,
          finalUrl: null,
          status: "down",
          statusCode: null,
          statusText: null,
          responseTime: null,
          reason: "Connection refused",
          failedStage: "connect",
          redirectHops: null,
          proxyBlocked: false,
        },
        meta: { tool: "is-site-down", version: "v1" },
      }),
    );
  });

  it.each([
    ["a bare domain", "example.com"],
    ["a private address", "http://10.0.0.1/"],
    ["a Fetch bad port", "http://127.0.0.1:6667/"],
  ])("refuses %s with a 400 whose message names the rule", async (_label, url) => {
    const { status, body } = await rest(url);
    expect(status).toBe(400);
    expect(body).toMatchObject({ ok: false, error: { message: expect.any(String) as string } });
  });

  it("a missing url parameter is a 400", async () => {
    const response = await fetch(`${server.url}/api/v1/is-site-down`);
    expect(response.status).toBe(400);
  });
});

describe("is-site-down: every door gives the same result", () => {
  const connect = () => createClient(DiagnosticsService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
  const grpc = () => createClient(DiagnosticsService, createGrpcTransport({ baseUrl: server.url }));

  it.each(["/start", "/blocked", "/broken"])("for %s, REST, Connect and gRPC agree", async (path) => {
    const url = targets.url(path);
    const viaRest = (await rest(url)).body.data;
    const viaConnect = renderMessage(CheckSiteResponseSchema, await connect().checkSite({ url }));
    const viaGrpc = renderMessage(CheckSiteResponseSchema, await grpc().checkSite({ url }));
    expect(withoutTime(viaConnect)).toEqual(withoutTime(viaRest));
    expect(withoutTime(viaGrpc)).toEqual(withoutTime(viaRest));
  });

  it("a refused URL is InvalidArgument on Connect and a 400 on REST", async () => {
    const error = await connect()
      .checkSite({ url: "http://169.254.169.254/latest/meta-data/" })
      .then(
        () => null,
        (thrown: unknown) => ConnectError.from(thrown),
      );
    expect(error?.code).toBe(Code.InvalidArgument);
    const { status, body } = await rest("http://169.254.169.254/latest/meta-data/");
    expect(status).toBe(400);
    expect((body.error as JsonObject).message).toBe(error?.rawMessage);
  });
});
