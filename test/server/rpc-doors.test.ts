import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainStatus, DiagnosticsService, SiteStatus } from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { Door } from "../../src/server/door/call-intake.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { createGate } from "../fixtures/gate-interceptor.js";

describe("Connect, gRPC and gRPC-Web on the one port", () => {
  let targets: HttpTargets;
  let service: TestService;
  const gate = createGate((request) =>
    request.header.get("x-api-key") === "spent"
      ? new ConnectError("credit budget exhausted", Code.ResourceExhausted, new Headers({ "retry-after": "42" }))
      : undefined,
  );

  beforeAll(async () => {
    targets = await startHttpTargets({
      routes: { "/up": { kind: "respond", status: 200 }, "/old": { kind: "redirect", status: 302, location: "/up" } },
    });
    service = await startTestService({ interceptors: [gate.interceptor], config: { tracePorts: [targets.httpPort] } });
  });
  afterAll(async () => {
    await service?.close();
    await targets?.close();
  });

  const doors: [Door, string, () => Transport][] = [
    ["connect", "Connect JSON over HTTP/1.1", () => createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" })],
    [
      "connect",
      "Connect binary over HTTP/1.1",
      () => createConnectTransport({ baseUrl: service.url, httpVersion: "1.1", useBinaryFormat: true }),
    ],
    ["grpc", "gRPC over h2c", () => createGrpcTransport({ baseUrl: service.url })],
    ["grpc-web", "gRPC-Web over HTTP/1.1", () => createGrpcWebTransport({ baseUrl: service.url, httpVersion: "1.1" })],
  ];

  it.each(doors)("%s door (%s) runs a real CheckSite through the interceptors", async (door, _label, transport) => {
    const client = createClient(DiagnosticsService, transport());
    const before = gate.visits.length;
    const result = await client.checkSite({ url: targets.url("/up") }, { headers: { "x-api-key": "k" } });
    expect(result.status).toBe(SiteStatus.UP);
    expect(result.statusCode).toBe(200);
    expect(gate.visits.slice(before)).toEqual([{ door, method: "CheckSite", apiKey: "k" }]);
  });

  it.each(doors)("%s door (%s) runs a real TraceRedirects", async (_door, _label, transport) => {
    const client = createClient(DiagnosticsService, transport());
    const result = await client.traceRedirects({ url: targets.url("/old") }, { headers: { "x-api-key": "k" } });
    expect(result.chainStatus).toBe(ChainStatus.REDIRECTS_DETECTED);
    expect(result.chain.map((hop) => hop.status)).toEqual([302, 200]);
  });

  it.each(doors)("%s door (%s) carries an interceptor's error code and metadata", async (_door, _label, transport) => {
    const client = createClient(DiagnosticsService, transport());
    const error = await client.checkSite({ url: targets.url("/up") }, { headers: { "x-api-key": "spent" } }).then(
      () => undefined,
      (reason: unknown) => ConnectError.from(reason),
    );
    expect(error?.code).toBe(Code.ResourceExhausted);
    expect(error?.rawMessage).toBe("credit budget exhausted");
    expect(error?.metadata.get("retry-after")).toBe("42");
  });
});
