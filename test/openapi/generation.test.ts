import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { create, fromBinary } from "@bufbuild/protobuf";
import { CodeGeneratorRequestSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPENAPI_DOCUMENT_PATH } from "../../src/openapi/openapi-document.js";
import { OUTPUT_FILE, protocGenSitediagOpenapi } from "../../tools/protoc-gen-sitediag-openapi/plugin.js";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
const buf = join(root, "node_modules/@bufbuild/buf/bin/buf");
// The plugin entry exactly as buf.gen.yaml has it, without the clean of gen/.
const template = JSON.stringify({
  version: "v2",
  plugins: [{ local: ["node", "--import", "tsx", "tools/protoc-gen-sitediag-openapi/main.ts"], out: "openapi", strategy: "all" }],
});

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "sitediag-openapi-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("buf generate with the plugin", () => {
  it("reproduces the committed document byte for byte, run after run", async () => {
    const committed = await readFile(join(root, OPENAPI_DOCUMENT_PATH), "utf8");
    for (const out of ["first", "second"]) {
      await run(buf, ["generate", "--template", template, "-o", join(scratch, out)], { cwd: root });
      expect(await readFile(join(scratch, out, "openapi", OUTPUT_FILE), "utf8")).toBe(committed);
    }
    // Two generations, each a buf process and the plugin through tsx (about 3 CPU-s): on a machine running two copies
    // of the suite they took past the default 30 s. The bound guards a hang, not speed.
  }, 180_000);
});

describe("proto the REST door cannot render", () => {
  it("fails generation with every offending element named", async () => {
    const module = join(scratch, "bad");
    await mkdir(join(module, "bad/v1"), { recursive: true });
    await cp(join(root, "third_party/google"), join(module, "google"), { recursive: true });
    await cp(join(root, "proto/sitediag"), join(module, "sitediag"), { recursive: true });
    await writeFile(join(module, "buf.yaml"), "version: v2\n");
    await writeFile(
      join(module, "bad/v1/bad.proto"),
      `syntax = "proto3";
package bad.v1;
import "google/api/annotations.proto";
import "sitediag/v1/options.proto";
service BadService {
  rpc Get(GetRequest) returns (GetResponse) { option (google.api.http) = {get: "/api/v1/get"}; }
  rpc Put(GetRequest) returns (GetResponse) { option (google.api.http) = {put: "/api/v1/put" body: "*"}; }
  rpc Unrouted(GetRequest) returns (GetResponse);
}
message GetRequest { string url = 1; }
enum Colour {
  COLOUR_UNSPECIFIED = 0;
  COLOUR_RED = 1 [(sitediag.v1.rest_value) = "red"];
  COLOUR_BLUE = 2;
}
message GetResponse {
  Colour colour = 1;
  int64 big = 2;
  map<string, string> labels = 3;
}
`,
    );
    const image = join(scratch, "bad.binpb");
    await run(buf, ["build", module, "-o", image], { cwd: root });
    const set = fromBinary(FileDescriptorSetSchema, await readFile(image));
    const response = protocGenSitediagOpenapi.run(
      create(CodeGeneratorRequestSchema, { fileToGenerate: ["bad/v1/bad.proto"], protoFile: set.file }),
    );

    expect(response.file).toEqual([]);
    expect(response.error?.split("\n").sort()).toEqual([
      "bad.v1.BadService.Put: only get and post bindings are served, found put [unsupported-http-rule]",
      "bad.v1.Colour.COLOUR_BLUE: used by bad.v1.GetResponse.colour but has no (sitediag.v1.rest_value) [enum-value-without-rest-value]",
      "bad.v1.GetResponse.big: scalar INT64 has no REST rendering yet (64-bit and bytes JSON forms are strings) [unsupported-field-kind]",
      "bad.v1.GetResponse.labels: map fields have no REST rendering yet [unsupported-field-kind]",
    ]);
  });
});
