import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsService, TraceRedirectsResponseSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { renderMessage } from "../../src/server/rest/rest-render.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { closedLoopbackPort } from "../fixtures/http-targets.js";
import { startTraceTarget, zeroTimings, type TraceTarget } from "../fixtures/trace-targets.js";

let site: TraceTarget;
let service: TestService;
let client: Client<typeof DiagnosticsService>;
let closedPort: number;

beforeAll(async () => {
  site = await startTraceTarget();
  closedPort = await closedLoopbackPort();
  service = await startTestService({
    config: { tracePorts: [site.port, closedPort, 80], traceHopTimeoutMs: 2_000, traceTotalTimeoutMs: 5_000 },
  });
  client = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
});

afterAll(async () => {
  await service.close();
  await site.close();
});

async function rest(url: string): Promise<{ status: number; body: JsonObject }> {
  const response = await fetch(`${service.url}/api/v1/redirect-check?url=${encodeURIComponent(url)}`);
  return { status: response.status, body: zeroTimings((await response.json()) as JsonValue) as JsonObject };
}

const meta = { tool: "redirect-check", version: "v1" };
const hop = (n: number, url: string, status: number, statusText: string, location: string | null) => ({
  hop: n,
  url,
  hostname: "127.0.0.1",
  status,
  statusText,
  location,
  redirectType: location === null ? null : `${status} ${statusText}`,
  responseTimeMs: 0,
  upgradedToHttps: false,
});

describe("GET /api/v1/redirect-check", () => {
  it("answers a healthy chain with the exact envelope", async () => {
    site.route("/rest-ok", { kind: "status", status: 200 });
    expect(await rest(site.url("/rest-ok"))).toEqual({
      status: 200,
      body: {
        ok: true,
        data: {
          input: site.url("/rest-ok"),
          redirects: 0,
          finalUrl: site.url("/rest-ok"),
          finalStatus: 200,
          totalTimeMs: 0,
          chainStatus: "Healthy",
          chain: [hop(1, site.url("/rest-ok"), 200, "OK", null)],
          warnings: [],
        },
        meta,
      },
    });
  });

  it("answers a multi-hop chain with the exact envelope", async () => {
    site.route("/rest-a", { kind: "redirect", status: 301, location: "/rest-b" });
    site.route("/rest-b", { kind: "redirect", status: 301, location: "/rest-c" });
    site.route("/rest-c", { kind: "status", status: 200 });
    expect(await rest(site.url("/rest-a"))).toEqual({
      status: 200,
      body: {
        ok: true,
        data: {
          input: site.url("/rest-a"),
          redirects: 2,
          finalUrl: site.url("/rest-c"),
          finalStatus: 200,
          totalTimeMs: 0,
          chainStatus: "Redirects detected",
          chain: [
            hop(1, site.url("/rest-a"), 301, "Moved Permanently", site.url("/rest-b")),
            hop(2, site.url("/rest-b"), 301, "Moved Permanently", site.url("/rest-c")),
            hop(3, site.url("/rest-c"), 200, "OK", null),
          ],
          warnings: [],
        },
        meta,
      },
    });
  });

  it("answers a failed chain with 200, the partial chain and the exact envelope", async () => {
    site.route("/rest-loop", { kind: "redirect", status: 301, location: "/rest-loop" });
    expect(await rest(site.url("/rest-loop"))).toEqual({
      status: 200,
      body: {
        ok: true,
        data: {
          input: site.url("/rest-loop"),
          redirects: 1,
          finalUrl: site.url("/rest-loop"),
          finalStatus: null,
          totalTimeMs: 0,
          chainStatus: "Redirect loop",
          chain: [hop(1, site.url("/rest-loop"), 301, "Moved Permanently", site.url("/rest-loop"))],
          warnings: [
            {
              code: "redirect_loop",
              message: `Hop 1 redirects back to ${site.url("/rest-loop")}, already in the chain`,
              hop: 1,
              severity: "problem",
            },
          ],
        },
        meta,
      },
    });
  });

  it("answers a first request that cannot connect with 200 Request failed and an empty chain", async () => {
    const url = `http://127.0.0.1:${closedPort}/`;
    const { status, body } = await rest(url);
    expect(status).toBe(200);
    expect(body["data"]).toMatchObject({
      input: url,
      redirects: 0,
      finalUrl: url,
      finalStatus: null,
      chainStatus: "Request failed",
      chain: [],
    });
  });

  it.each([
    ["credentials", "http://user:pw@127.0.0.1/"],
    ["a refused address", "http://169.254.169.254/latest/meta-data/"],
    ["another scheme", "file:///etc/passwd"],
    ["unparsable input", "http://[::1"],
  ])("refuses %s with 400 and an error naming the rule", async (_name, url) => {
    const { status, body } = await rest(url);
    expect(status).toBe(400);
    expect(body).toMatchObject({ ok: false, error: { code: "invalid_argument", message: expect.any(String) }, meta });
  });

  it("names the refusing rule in the error message", async () => {
    const { body } = await rest(`http://127.0.0.1:${site.port + 1}/`);
    expect(body["error"]).toEqual({ code: "invalid_argument", message: expect.stringContaining(`Port ${site.port + 1} is not allowed`) });
  });
});

describe("both doors agree", () => {
  it("gives the same data through Connect as through REST", async () => {
    site.route("/doors-a", { kind: "redirect", status: 302, location: "/doors-b" });
    site.route("/doors-b", { kind: "status", status: 404 });
    const viaConnect = await client.traceRedirects({ url: site.url("/doors-a") });
    const viaRest = await rest(site.url("/doors-a"));
    expect(zeroTimings(renderMessage(TraceRedirectsResponseSchema, viaConnect))).toEqual(viaRest.body["data"]);
    expect(viaRest.body["data"]).toMatchObject({ chainStatus: "Redirects detected", finalStatus: 404 });
  });

  it("refuses the same input with invalid_argument through Connect", async () => {
    const error = await client.traceRedirects({ url: "http://10.0.0.1/" }).then(
      () => null,
      (reason: unknown) => ConnectError.from(reason),
    );
    expect(error?.code).toBe(Code.InvalidArgument);
    expect(error?.rawMessage).toContain("10.0.0.1");
  });
});
