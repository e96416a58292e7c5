import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { create, createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ServerReflectionRequest,
  ServerReflection as ReflectionV1,
  type ServerReflectionResponse,
} from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1Alpha } from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { createGate } from "../fixtures/gate-interceptor.js";

const run = promisify(execFile);
const BUF = new URL("../../node_modules/.bin/buf", import.meta.url).pathname;

type Query = Partial<Pick<ServerReflectionRequest, "messageRequest">>["messageRequest"];

describe("gRPC server reflection", () => {
  let service: TestService;
  let targets: HttpTargets;
  // Every DiagnosticsService call must present this key; reflection must not need one.
  const gate = createGate();

  beforeAll(async () => {
    targets = await startHttpTargets({ routes: { "/up": { kind: "respond", status: 200 } } });
    service = await startTestService({ interceptors: [gate.interceptor] });
  });
  afterAll(async () => {
    await service?.close();
    await targets?.close();
  });

  async function ask(queries: Query[]): Promise<ServerReflectionResponse[]> {
    const client = createClient(ReflectionV1, createGrpcTransport({ baseUrl: service.url }));
    const answers: ServerReflectionResponse[] = [];
    async function* requests() {
      for (const messageRequest of queries) yield { host: "", messageRequest };
    }
    for await (const answer of client.serverReflectionInfo(requests())) answers.push(answer);
    return answers;
  }

  it("lists the diagnostics, health and both reflection services without an API key", async () => {
    const before = gate.visits.length;
    const [answer] = await ask([{ case: "listServices", value: "" }]);
    expect(answer?.messageResponse.case).toBe("listServicesResponse");
    const names =
      answer?.messageResponse.case === "listServicesResponse" ? answer.messageResponse.value.service.map((each) => each.name) : [];
    expect(names).toEqual([
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
      "sitediag.v1.DiagnosticsService",
    ]);
    expect(gate.visits.length).toBe(before);
  });

  it("resolves every RPC to a file set that describes them with their HTTP annotations", async () => {
    const answers = await ask([
      { case: "fileContainingSymbol", value: "sitediag.v1.DiagnosticsService.CheckSite" },
      { case: "fileContainingSymbol", value: "sitediag.v1.DiagnosticsService.TraceRedirects" },
    ]);
    for (const answer of answers) {
      expect(answer.messageResponse.case).toBe("fileDescriptorResponse");
      if (answer.messageResponse.case !== "fileDescriptorResponse") continue;
      const files = answer.messageResponse.value.fileDescriptorProto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));
      expect(files.map((file) => file.name)).toEqual(
        expect.arrayContaining([
          "sitediag/v1/diagnostics.proto",
          "sitediag/v1/options.proto",
          "google/api/annotations.proto",
          "google/api/http.proto",
          "google/protobuf/descriptor.proto",
        ]),
      );
      // The requested file comes first, and the answer is complete: its imports resolve from the answer alone.
      const [requested] = files;
      expect(requested?.name).toBe("sitediag/v1/diagnostics.proto");
      const built = createFileRegistry(requested ?? create(FileDescriptorProtoSchema), (name) => files.find((file) => file.name === name));
      const service = built.getService("sitediag.v1.DiagnosticsService");
      expect(service?.methods.map((method) => method.name)).toEqual([
        "CheckSite",
        "TraceRedirects",
        "CheckSites",
        "TraceRedirectsBatch",
        "VantageCheckSite",
        "VantageTraceRedirects",
      ]);
    }
  });

  it("answers unknown symbols, files and extensions with NOT_FOUND inside the stream", async () => {
    const answers = await ask([
      { case: "fileContainingSymbol", value: "sitediag.v1.Nope" },
      { case: "fileByFilename", value: "nope.proto" },
      {
        case: "fileContainingExtension",
        value: { $typeName: "grpc.reflection.v1.ExtensionRequest", containingType: "google.protobuf.EnumValueOptions", extensionNumber: 1 },
      },
    ]);
    expect(
      answers.map((answer) => (answer.messageResponse.case === "errorResponse" ? answer.messageResponse.value.errorCode : -1)),
    ).toEqual([5, 5, 5]);
  });

  it("finds the custom options by extension and lists extension numbers of their options message", async () => {
    const answers = await ask([
      {
        case: "fileContainingExtension",
        value: {
          $typeName: "grpc.reflection.v1.ExtensionRequest",
          containingType: "google.protobuf.EnumValueOptions",
          extensionNumber: 50101,
        },
      },
      { case: "allExtensionNumbersOfType", value: "google.protobuf.FieldOptions" },
    ]);
    const [byExtension, numbers] = answers;
    expect(byExtension?.messageResponse.case).toBe("fileDescriptorResponse");
    if (byExtension?.messageResponse.case === "fileDescriptorResponse") {
      const first = fromBinary(FileDescriptorProtoSchema, byExtension.messageResponse.value.fileDescriptorProto[0] ?? new Uint8Array());
      expect(first.name).toBe("sitediag/v1/options.proto");
    }
    expect(numbers?.messageResponse.case === "allExtensionNumbersResponse" ? numbers.messageResponse.value.extensionNumber : []).toEqual(
      expect.arrayContaining([50102]),
    );
  });

  it("serves v1alpha for older tools", async () => {
    const client = createClient(ReflectionV1Alpha, createGrpcTransport({ baseUrl: service.url }));
    async function* requests() {
      yield { host: "", messageRequest: { case: "fileByFilename" as const, value: "sitediag/v1/diagnostics.proto" } };
    }
    const answers = [];
    for await (const answer of client.serverReflectionInfo(requests())) answers.push(answer);
    expect(answers[0]?.messageResponse.case).toBe("fileDescriptorResponse");
  });

  it("lets buf curl list both RPCs with no schema", async () => {
    const { stdout } = await run(BUF, ["curl", "--protocol", "grpc", "--http2-prior-knowledge", "--list-methods", service.url]);
    const methods = stdout.trim().split("\n");
    expect(methods).toEqual(
      expect.arrayContaining(["sitediag.v1.DiagnosticsService/CheckSite", "sitediag.v1.DiagnosticsService/TraceRedirects"]),
    );
  });

  it("lets buf curl call CheckSite with no schema, through the interceptors", async () => {
    const before = gate.visits.length;
    const { stdout } = await run(BUF, [
      "curl",
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      "-H",
      "x-api-key: from-buf-curl",
      "-d",
      JSON.stringify({ url: targets.url("/up") }),
      `${service.url}/sitediag.v1.DiagnosticsService/CheckSite`,
    ]);
    const answer = JSON.parse(stdout) as Record<string, unknown>;
    expect(answer).toMatchObject({ requestedUrl: targets.url("/up"), status: "SITE_STATUS_UP", statusCode: 200 });
    expect(gate.visits.slice(before)).toEqual([{ door: "grpc", method: "CheckSite", apiKey: "from-buf-curl" }]);
  });

  it("lets buf curl stream a CheckSites batch with no schema, one message per item", async () => {
    const { stdout } = await run(BUF, [
      "curl",
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      "-H",
      "x-api-key: from-buf-curl",
      "-d",
      JSON.stringify({ urls: [targets.url("/up"), "not a url"] }),
      `${service.url}/sitediag.v1.DiagnosticsService/CheckSites`,
    ]);
    // buf curl prints each streamed message as its own JSON object.
    const items = stdout
      .trim()
      .split(/\n(?=\{)/)
      .map((text) => JSON.parse(text) as { index?: number; result?: { status: string }; error?: { code: string } });
    expect(items).toHaveLength(2);
    expect(items.find((item) => item.error !== undefined)).toMatchObject({ index: 1, error: { code: "invalid_argument" } });
    expect(items.find((item) => item.result !== undefined)).toMatchObject({ result: { status: "SITE_STATUS_UP" } });
  });

  it("shows buf curl the typed error for a bad url", async () => {
    const failure = await run(BUF, [
      "curl",
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      "-d",
      JSON.stringify({ url: "ftp://127.0.0.1/" }),
      `${service.url}/sitediag.v1.DiagnosticsService/CheckSite`,
    ]).then(
      () => undefined,
      (error: unknown) => error as { stderr: string },
    );
    expect(JSON.parse(failure?.stderr ?? "{}")).toMatchObject({ code: "invalid_argument" });
  });
});
