import { create, createFileRegistry, type DescFile } from "@bufbuild/protobuf";
import type { Plugin } from "@bufbuild/protoplugin";
import {
  CodeGeneratorResponse_Feature,
  CodeGeneratorResponseSchema,
  FileDescriptorSetSchema,
  type CodeGeneratorRequest,
} from "@bufbuild/protobuf/wkt";
import { buildOpenApiDocument } from "./openapi-document.js";
import { describeProblems } from "./problem.js";
import { createProtoOptions } from "./proto-options.js";

/** Name of the generated file inside the plugin's `out` directory. */
export const OUTPUT_FILE = "sitediag.openapi.json";

/**
 * protoc-gen-sitediag-openapi: one OpenAPI 3.1 JSON document for all REST
 * routes of the files buf asks for. Run it with `strategy: all` so one
 * invocation sees every file and writes the single document.
 */
export const protocGenSitediagOpenapi: Plugin = {
  name: "protoc-gen-sitediag-openapi",
  version: "1.0.0",
  run(request: CodeGeneratorRequest) {
    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: request.protoFile }));
    const files = request.fileToGenerate.map((name) => registry.getFile(name)).filter((file): file is DescFile => file !== undefined);
    const result = buildOpenApiDocument(files, createProtoOptions(registry));
    if (!result.ok) {
      return create(CodeGeneratorResponseSchema, { error: describeProblems(result.problems) });
    }
    return create(CodeGeneratorResponseSchema, {
      // Proto3 optional fields are what the document's nulls are made of.
      supportedFeatures: BigInt(CodeGeneratorResponse_Feature.PROTO3_OPTIONAL),
      file: [{ name: OUTPUT_FILE, content: `${JSON.stringify(result.document, null, 2)}\n` }],
    });
  },
};
