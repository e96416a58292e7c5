import { create, toJson, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createHandlerContext } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsService, TraceRedirectsRequestSchema, TraceRedirectsResponseSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { Prober } from "../../src/probe/hop-types.js";
import { metaFor, successBody } from "../../src/server/door/json-answer.js";
import { renderMessage } from "../../src/server/rest/rest-render.js";
import { createTraceRedirectsHandler } from "../../src/service/trace-redirects.js";
import { closedLoopbackPort } from "../fixtures/http-targets.js";
import { startTraceTarget, zeroTimings, type TraceTarget } from "../fixtures/trace-targets.js";
import { traceEnv, loopbackProber, runnerOf } from "../fixtures/test-env.js";

let site: TraceTarget;
let prober: Prober;
let closedPort: number;

beforeAll(async () => {
  site = await startTraceTarget();
  prober = loopbackProber();
  closedPort = await closedLoopbackPort();
});

afterAll(async () => {
  await prober.close();
  await site.close();
});

function context() {
  return createHandlerContext({
    service: DiagnosticsService,
    method: DiagnosticsService.method.traceRedirects,
    protocolName: "connect",
    requestMethod: "POST",
    url: "http://127.0.0.1/sitediag.v1.DiagnosticsService/TraceRedirects",
  });
}

async function traceMessage(url: string) {
  const handler = createTraceRedirectsHandler(runnerOf(traceEnv(prober, { tracePorts: [site.port, closedPort] })));
  return handler(create(TraceRedirectsRequestSchema, { url }), context());
}

/** The message as protobuf JSON (what Connect JSON clients see). */
async function traceJson(url: string): Promise<JsonObject> {
  const json = toJson(TraceRedirectsResponseSchema, await traceMessage(url), { alwaysEmitImplicit: true });
  return zeroTimings(json) as JsonObject;
}

/** The message as the REST door's envelope, rendered by the server's own schema-driven renderer. */
async function traceEnvelope(url: string): Promise<JsonObject> {
  const body = successBody(renderMessage(TraceRedirectsResponseSchema, await traceMessage(url)), metaFor("redirect-check"));
  return zeroTimings(body) as JsonObject;
}

describe("TraceRedirects message", () => {
  it("maps a healthy chain, leaving the null fields unset", async () => {
    site.route("/", { kind: "status", status: 200 });
    expect(await traceJson(site.url("/"))).toEqual({
      input: site.url("/"),
      redirects: 0,
      finalUrl: site.url("/"),
      finalStatus: 200,
      totalTimeMs: 0,
      chainStatus: "CHAIN_STATUS_HEALTHY",
      chain: [
        { hop: 1, url: site.url("/"), hostname: "127.0.0.1", status: 200, statusText: "OK", responseTimeMs: 0, upgradedToHttps: false },
      ],
      warnings: [],
    });
  });

  it("maps a multi-hop chain with its warnings", async () => {
    site.route("/old", { kind: "redirect", status: 301, location: "/interim" });
    site.route("/interim", { kind: "redirect", status: 302, location: "/new" });
    site.route("/new", { kind: "status", status: 200 });
    expect(await traceJson(site.url("/old"))).toEqual({
      input: site.url("/old"),
      redirects: 2,
      finalUrl: site.url("/new"),
      finalStatus: 200,
      totalTimeMs: 0,
      chainStatus: "CHAIN_STATUS_REDIRECTS_DETECTED",
      chain: [
        {
          hop: 1,
          url: site.url("/old"),
          hostname: "127.0.0.1",
          status: 301,
          statusText: "Moved Permanently",
          location: site.url("/interim"),
          redirectType: "301 Moved Permanently",
          responseTimeMs: 0,
          upgradedToHttps: false,
        },
        {
          hop: 2,
          url: site.url("/interim"),
          hostname: "127.0.0.1",
          status: 302,
          statusText: "Found",
          location: site.url("/new"),
          redirectType: "302 Found",
          responseTimeMs: 0,
          upgradedToHttps: false,
        },
        { hop: 3, url: site.url("/new"), hostname: "127.0.0.1", status: 200, statusText: "OK", responseTimeMs: 0, upgradedToHttps: false },
      ],
      warnings: [
        {
          code: "temporary_redirect",
          message: "Hop 2 is a temporary redirect (302 Found); a 301 or 308 is kept by browsers and search engines",
          hop: 2,
          severity: "WARNING_SEVERITY_WARNING",
        },
      ],
    });
  });

  it("maps a failed chain: no final status, a chain-wide warning without a hop", async () => {
    const url = `http://127.0.0.1:${closedPort}/`;
    const json = await traceJson(url);
    const warnings = json["warnings"];
    expect(Array.isArray(warnings) && warnings.length === 1).toBe(true);
    const message = Array.isArray(warnings) ? (warnings[0] as JsonObject)["message"] : undefined;
    expect(typeof message).toBe("string");
    expect(json).toEqual({
      input: url,
      redirects: 0,
      finalUrl: url,
      totalTimeMs: 0,
      chainStatus: "CHAIN_STATUS_REQUEST_FAILED",
      chain: [],
      warnings: [{ code: "connect_failed", message, severity: "WARNING_SEVERITY_PROBLEM" }],
    });
  });

  it("turns an input refusal into InvalidArgument carrying the refusal", async () => {
    const handler = createTraceRedirectsHandler(runnerOf(traceEnv(prober, { tracePorts: [site.port, 80] })));
    const error = await handler(create(TraceRedirectsRequestSchema, { url: "http://10.0.0.1/" }), context()).then(
      () => null,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(ConnectError);
    const connectError = ConnectError.from(error);
    expect(connectError.code).toBe(Code.InvalidArgument);
    expect(connectError.cause).toMatchObject({ rule: "non_public_address" });
    expect(connectError.rawMessage).toContain("10.0.0.1");
  });
});

describe("TraceRedirects REST envelope (contract JSON of spec 2.1 and 2.3)", () => {
  const meta = { tool: "redirect-check", version: "v1" };

  it("renders a healthy chain", async () => {
    site.route("/home", { kind: "status", status: 200 });
    expect(await traceEnvelope(site.url("/home"))).toEqual({
      ok: true,
      data: {
        input: site.url("/home"),
        redirects: 0,
        finalUrl: site.url("/home"),
        finalStatus: 200,
        totalTimeMs: 0,
        chainStatus: "Healthy",
        chain: [
          {
            hop: 1,
            url: site.url("/home"),
            hostname: "127.0.0.1",
            status: 200,
            statusText: "OK",
            location: null,
            redirectType: null,
            responseTimeMs: 0,
            upgradedToHttps: false,
          },
        ],
        warnings: [],
      },
      meta,
    });
  });

  it("renders a multi-hop chain", async () => {
    site.route("/start", { kind: "redirect", status: 308, location: "/middle" });
    site.route("/middle", { kind: "redirect", status: 307, location: "/end" });
    site.route("/end", { kind: "status", status: 200 });
    expect(await traceEnvelope(site.url("/start"))).toEqual({
      ok: true,
      data: {
        input: site.url("/start"),
        redirects: 2,
        finalUrl: site.url("/end"),
        finalStatus: 200,
        totalTimeMs: 0,
        chainStatus: "Redirects detected",
        chain: [
          {
            hop: 1,
            url: site.url("/start"),
            hostname: "127.0.0.1",
            status: 308,
            statusText: "Permanent Redirect",
            location: site.url("/middle"),
            redirectType: "308 Permanent Redirect",
            responseTimeMs: 0,
            upgradedToHttps: false,
          },
          {
            hop: 2,
            url: site.url("/middle"),
            hostname: "127.0.0.1",
            status: 307,
            statusText: "Temporary Redirect",
            location: site.url("/end"),
            redirectType: "307 Temporary Redirect",
            responseTimeMs: 0,
            upgradedToHttps: false,
          },
          {
            hop: 3,
            url: site.url("/end"),
            hostname: "127.0.0.1",
            status: 200,
            statusText: "OK",
            location: null,
            redirectType: null,
            responseTimeMs: 0,
            upgradedToHttps: false,
          },
        ],
        warnings: [
          {
            code: "temporary_redirect",
            message: "Hop 2 is a temporary redirect (307 Temporary Redirect); a 301 or 308 is kept by browsers and search engines",
            hop: 2,
            severity: "warning",
          },
        ],
      },
      meta,
    });
  });

  it("renders a failed chain with its partial chain and null final status", async () => {
    const dead = `http://127.0.0.1:${closedPort}/gone`;
    site.route("/to-dead", { kind: "redirect", status: 301, location: dead });
    const envelope = await traceEnvelope(site.url("/to-dead"));
    const data = envelope["data"] as JsonObject;
    const warnings = data["warnings"] as JsonObject[];
    const message = warnings[0]?.["message"];
    expect(message).toMatch(new RegExp(`^HEAD ${dead} failed at the connect stage: `));
    expect(envelope).toEqual({
      ok: true,
      data: {
        input: site.url("/to-dead"),
        redirects: 1,
        finalUrl: dead,
        finalStatus: null,
        totalTimeMs: 0,
        chainStatus: "Request failed",
        chain: [
          {
            hop: 1,
            url: site.url("/to-dead"),
            hostname: "127.0.0.1",
            status: 301,
            statusText: "Moved Permanently",
            location: dead,
            redirectType: "301 Moved Permanently",
            responseTimeMs: 0,
            upgradedToHttps: false,
          },
        ],
        warnings: [{ code: "connect_failed", message, hop: null, severity: "problem" }],
      },
      meta,
    });
  });
});
