import { ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("request logs", () => {
  let targets: HttpTargets;
  let service: ServeTestService;

  beforeAll(async () => {
    targets = await startHttpTargets({ routes: { "/up": { kind: "respond", status: 200 } } });
    service = await startTestService({ as: "serve" });
  });
  afterAll(async () => {
    await service?.close();
    await targets?.close();
  });

  const lineFor = (requestId: string) => {
    const lines = service.logLines().filter((line) => line.requestId === requestId);
    expect(lines).toHaveLength(1);
    return lines[0] ?? {};
  };
  // The log line is written when the response closes, a moment after the client has it.
  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

  it("writes one line per call with id, door, operation, outcome, status, duration and the target's host only", async () => {
    const target = targets.url("/up?token=t0p").replace("127.0.0.1", "user:pa55word@127.0.0.1");
    const response = await fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(target)}`, {
      headers: { "x-api-key": service.key, "x-request-id": "req-header-1" },
    });
    expect(response.status).toBe(400); // a URL with credentials is refused, after the charge
    expect(response.headers.get("x-request-id")).toBe("req-header-1");
    await settle();
    const line = lineFor("req-header-1");
    expect(line).toMatchObject({
      level: 30,
      msg: "request",
      door: "rest",
      operation: "CheckSite",
      outcome: "invalid_argument",
      status: 400,
      targetHost: "127.0.0.1",
      method: "GET",
    });
    expect(typeof line.durationMs).toBe("number");
    expect(JSON.stringify(line)).not.toContain("pa55word");
    expect(JSON.stringify(line)).not.toContain("user:");
    expect(service.logText()).not.toContain(service.key);
  });

  it("redacts a key given in the query, inside the logged URL", async () => {
    const target = encodeURIComponent(targets.url("/up"));
    const response = await fetch(`${service.url}/api/v1/is-site-down?url=${target}&api_key=${service.key}`, {
      headers: { "x-request-id": "req-query-1" },
    });
    expect(response.status).toBe(200);
    await settle();
    const line = lineFor("req-query-1");
    expect(line).toMatchObject({ door: "rest", operation: "CheckSite", outcome: "ok", status: 200 });
    expect(line.url).toContain("api_key=%5BREDACTED%5D");
    expect(line.url).toContain("/api/v1/is-site-down?url=");
    expect(service.logText()).not.toContain(service.key);
    expect(service.logText()).not.toContain(service.key.slice(3, 20));
  });

  it("echoes or makes a request id on the Connect and gRPC doors, and logs their calls", async () => {
    const connect = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    let connectId: string | null = null;
    await connect.checkSite(
      { url: targets.url("/up") },
      {
        headers: { "x-api-key": service.key, "x-request-id": "bad id\twith spaces" },
        onHeader: (headers) => (connectId = headers.get("x-request-id")),
      },
    );
    expect(connectId).toMatch(UUID);

    const grpc = createClient(DiagnosticsService, createGrpcTransport({ baseUrl: service.url }));
    // No key: the error answer is trailers-only, so the id arrives in the error's metadata.
    const refused = await grpc
      .checkSite({ url: targets.url("/up") }, { headers: { "x-request-id": "grpc-1" } })
      .catch((error: unknown) => ConnectError.from(error));
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).metadata.get("x-request-id")).toBe("grpc-1");
    await settle();
    expect(lineFor(connectId ?? "")).toMatchObject({ door: "connect", operation: "CheckSite", outcome: "ok", targetHost: "127.0.0.1" });
    expect(lineFor("grpc-1")).toMatchObject({ door: "grpc", operation: "CheckSite", outcome: "unauthenticated", status: 200 });
  });

  it("logs requests outside the doors too, health probes at debug", async () => {
    const missing = await fetch(`${service.url}/nowhere?api_key=${service.key}`);
    expect(missing.status).toBe(404);
    const id = missing.headers.get("x-request-id") ?? "";
    expect(id).toMatch(UUID);
    await fetch(`${service.url}/healthz`, { headers: { "x-request-id": "probe-1" } });
    await settle();
    expect(lineFor(id)).toMatchObject({
      door: null,
      operation: null,
      outcome: "not_found",
      status: 404,
      url: "/nowhere?api_key=%5BREDACTED%5D",
    });
    expect(lineFor("probe-1")).toMatchObject({ level: 20, outcome: "ok", status: 200 });
  });
});
