import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createHandlerContext } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsService, TraceRedirectsRequestSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { createTraceRedirectsHandler } from "../../src/service/trace-redirects.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type TestEnv, createTestEnv, runnerOf } from "../fixtures/test-env.js";

describe("TraceRedirects handler", () => {
  let targets: HttpTargets;
  let env: TestEnv;

  beforeAll(async () => {
    targets = await startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 } } });
    env = { ...createTestEnv(), tracePorts: [targets.httpPort] };
  });

  afterAll(async () => {
    await env.close();
    await targets.close();
  });

  const context = () =>
    createHandlerContext({
      service: DiagnosticsService,
      method: DiagnosticsService.method.traceRedirects,
      protocolName: "connect",
      requestMethod: "POST",
      url: "http://sitediag.test/sitediag.v1.DiagnosticsService/TraceRedirects",
    });
  const request = (url: string) => create(TraceRedirectsRequestSchema, { url });

  it("answers a healthy chain with the message", async () => {
    const response = await createTraceRedirectsHandler(runnerOf(env))(request(targets.url("/ok")), context());
    expect(response).toMatchObject({ redirects: 0, finalStatus: 200, chain: [{ hop: 1, status: 200 }] });
  });

  it("reports a trace that breaks for an internal reason as Internal (a 500), hiding the internal message", async () => {
    // The real prober rejects only on a defect of ours; this one stands for such a defect.
    const broken: TestEnv = {
      ...env,
      prober: {
        screen: () => null,
        hop: () => Promise.reject(new Error("resolver state corrupted")),
        tlsVersions: () => Promise.reject(new Error("resolver state corrupted")),
        close: () => Promise.resolve(),
      },
    };
    const error = await createTraceRedirectsHandler(runnerOf(broken))(request(targets.url("/ok")), context()).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.Internal);
    expect((error as ConnectError).rawMessage).toBe("The trace could not be completed");
  });
});
