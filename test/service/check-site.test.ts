import { create, isFieldSet, toJson } from "@bufbuild/protobuf";
import { Code, ConnectError, createHandlerContext } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CheckSiteRequestSchema,
  CheckSiteResponseSchema,
  DiagnosticsService,
  FailedStage,
  SiteStatus,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { DiagnosticEnv } from "../../src/diagnostics/diagnostic-call.js";
import type { SiteCheckResult } from "../../src/diagnostics/site-check-result.js";
import { createLocalRunner } from "../../src/runner/local-runner.js";
import { renderMessage } from "../../src/server/rest/rest-render.js";
import { createCheckSiteHandler, siteCheckMessage } from "../../src/service/check-site.js";
import { type HttpTargets, closedLoopbackPort, startHttpTargets } from "../fixtures/http-targets.js";
import { type TestEnv, createTestEnv, runnerOf } from "../fixtures/test-env.js";

const UP: SiteCheckResult = {
  requestedUrl: "https://site.test/start",
  finalUrl: "https://site.test/home",
  status: "up",
  statusCode: 200,
  statusText: "OK",
  responseTime: 87,
  reason: null,
  failedStage: null,
  redirectHops: [{ url: "https://site.test/start", status: 301 }],
  proxyBlocked: false,
  proxyProvider: null,
};

const DOWN_NOTHING_RECEIVED: SiteCheckResult = {
  requestedUrl: "https://nowhere.test/",
  finalUrl: null,
  status: "down",
  statusCode: null,
  statusText: null,
  responseTime: null,
  reason: "DNS lookup failed: no such host",
  failedStage: "dns",
  redirectHops: null,
  proxyBlocked: false,
  proxyProvider: null,
};

describe("siteCheckMessage", () => {
  it("maps an up result field for field, leaving the null ones unset", () => {
    const message = siteCheckMessage(UP);
    expect(toJson(CheckSiteResponseSchema, message, { alwaysEmitImplicit: true })).toEqual({
      requestedUrl: "https://site.test/start",
      finalUrl: "https://site.test/home",
      status: "SITE_STATUS_UP",
      statusCode: 200,
      statusText: "OK",
      responseTime: 87,
      redirectHops: [{ url: "https://site.test/start", status: 301 }],
      proxyBlocked: false,
    });
    expect(isFieldSet(message, CheckSiteResponseSchema.field.reason)).toBe(false);
    expect(isFieldSet(message, CheckSiteResponseSchema.field.failedStage)).toBe(false);
  });

  it("maps a down result with nothing received: only the required fields are set", () => {
    const message = siteCheckMessage(DOWN_NOTHING_RECEIVED);
    expect(toJson(CheckSiteResponseSchema, message, { alwaysEmitImplicit: true })).toEqual({
      requestedUrl: "https://nowhere.test/",
      status: "SITE_STATUS_DOWN",
      reason: "DNS lookup failed: no such host",
      failedStage: "FAILED_STAGE_DNS",
      redirectHops: [],
      proxyBlocked: false,
    });
    for (const field of [
      CheckSiteResponseSchema.field.finalUrl,
      CheckSiteResponseSchema.field.statusCode,
      CheckSiteResponseSchema.field.statusText,
      CheckSiteResponseSchema.field.responseTime,
    ]) {
      expect(isFieldSet(message, field)).toBe(false);
    }
  });

  it.each([
    ["dns", FailedStage.DNS],
    ["connect", FailedStage.CONNECT],
    ["tls", FailedStage.TLS],
    ["http", FailedStage.HTTP],
  ] as const)("maps failedStage %s", (stage, expected) => {
    expect(siteCheckMessage({ ...DOWN_NOTHING_RECEIVED, failedStage: stage }).failedStage).toBe(expected);
  });
});

describe("REST data of a site check (exact JSON, every null in place)", () => {
  const data = (result: SiteCheckResult) => renderMessage(CheckSiteResponseSchema, siteCheckMessage(result));

  it("renders an up result", () => {
    expect(JSON.stringify(data(UP))).toBe(
      JSON.stringify({
        requestedUrl: "https://site.test/start",
        finalUrl: "https://site.test/home",
        status: "up",
        statusCode: 200,
        statusText: "OK",
        responseTime: 87,
        reason: null,
        failedStage: null,
        redirectHops: [{ url: "https://site.test/start", status: 301 }],
        proxyBlocked: false,
      }),
    );
  });

  it("renders a direct up result with redirectHops null", () => {
    expect(data({ ...UP, redirectHops: null })).toMatchObject({ redirectHops: null });
  });

  it("renders a down result with nothing received", () => {
    expect(JSON.stringify(data(DOWN_NOTHING_RECEIVED))).toBe(
      JSON.stringify({
        requestedUrl: "https://nowhere.test/",
        finalUrl: null,
        status: "down",
        statusCode: null,
        statusText: null,
        responseTime: null,
        reason: "DNS lookup failed: no such host",
        failedStage: "dns",
        redirectHops: null,
        proxyBlocked: false,
      }),
    );
  });

  it("renders a down result after a redirect to a refused address", () => {
    const refused: SiteCheckResult = {
      ...DOWN_NOTHING_RECEIVED,
      requestedUrl: "http://site.test/",
      finalUrl: "http://10.0.0.1/",
      responseTime: 12,
      reason: "Redirect to a non-public address was refused",
      failedStage: "http",
      redirectHops: [{ url: "http://site.test/", status: 302 }],
    };
    expect(JSON.stringify(data(refused))).toBe(
      JSON.stringify({
        requestedUrl: "http://site.test/",
        finalUrl: "http://10.0.0.1/",
        status: "down",
        statusCode: null,
        statusText: null,
        responseTime: 12,
        reason: "Redirect to a non-public address was refused",
        failedStage: "http",
        redirectHops: [{ url: "http://site.test/", status: 302 }],
        proxyBlocked: false,
      }),
    );
  });
});

describe("CheckSite handler", () => {
  let targets: HttpTargets;
  let env: TestEnv;

  beforeAll(async () => {
    targets = await startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 } } });
    env = createTestEnv({ siteTimeoutMs: 1_000 });
  });

  afterAll(async () => {
    await env.close();
    await targets.close();
  });

  const context = () =>
    createHandlerContext({
      service: DiagnosticsService,
      method: DiagnosticsService.method.checkSite,
      protocolName: "connect",
      requestMethod: "POST",
      url: "http://sitediag.test/sitediag.v1.DiagnosticsService/CheckSite",
    });
  const request = (url: string) => create(CheckSiteRequestSchema, { url });

  it("answers an up site with the message", async () => {
    const handler = createCheckSiteHandler(runnerOf(env));
    const response = await handler(request(targets.url("/ok")), context());
    expect(response).toMatchObject({ status: SiteStatus.UP, statusCode: 200, finalUrl: targets.url("/ok"), redirectHops: [] });
  });

  it("answers a down site with the message, never an error", async () => {
    const port = await closedLoopbackPort();
    const handler = createCheckSiteHandler(runnerOf(env));
    const response = await handler(request(`http://127.0.0.1:${port}/`), context());
    expect(response).toMatchObject({ status: SiteStatus.DOWN, failedStage: FailedStage.CONNECT, reason: "Connection refused" });
  });

  it.each([
    ["", "invalid_url"],
    ["example.com", "invalid_url"],
    ["http://10.0.0.1/", "non_public_address"],
    ["http://127.0.0.1:25/", "bad_port"],
  ])("refuses %j as InvalidArgument carrying the rule's reason", async (url, rule) => {
    const handler = createCheckSiteHandler(runnerOf(env));
    const error = await handler(request(url), context()).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ConnectError);
    const connectError = error as ConnectError;
    expect(connectError.code).toBe(Code.InvalidArgument);
    expect(connectError.rawMessage.length).toBeGreaterThan(0);
    expect(connectError.cause).toMatchObject({ rule });
  });

  it("reports a check that breaks for an internal reason as Internal (a 500), not as a down site", async () => {
    // The real prober rejects only on a defect of ours; this one stands for such a defect.
    // It runs on this thread (a thread's defect is the probe-threads test's).
    const broken: DiagnosticEnv = {
      ...env,
      prober: {
        screen: () => null,
        hop: () => Promise.reject(new Error("resolver state corrupted")),
        tlsVersions: () => Promise.reject(new Error("resolver state corrupted")),
        close: () => Promise.resolve(),
      },
    };
    const error = await createCheckSiteHandler(createLocalRunner(broken))(request(targets.url("/ok")), context()).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.Internal);
    expect((error as ConnectError).rawMessage).toBe("The check could not be completed");
  });

  it("reports a check ended by the caller as Canceled, not Internal", async () => {
    targets.route("/hang", { kind: "hang" });
    const handler = createCheckSiteHandler(runnerOf(env));
    const ctx = context();
    setTimeout(() => ctx.abort(new Error("client went away")), 50);
    const error = await handler(request(targets.url("/hang")), ctx).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.Canceled);
  });
});
