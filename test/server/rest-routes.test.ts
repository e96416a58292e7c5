import { create, createFileRegistry, type DescService, type MessageInitShape, setExtension } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  MethodOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { http } from "../../gen/google/api/annotations_pb.js";
import { HttpRuleSchema } from "../../gen/google/api/http_pb.js";
import { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { messageFromQuery } from "../../src/server/rest/rest-input.js";
import { restRoutesOf } from "../../src/server/door/route-table.js";

type Rule = MessageInitShape<typeof HttpRuleSchema>;

/** A service made up at run time, `test.v1.Extra`, with one method per rule (none for undefined). */
function serviceWith(rules: readonly (Rule | undefined)[], serverStreaming = false): DescService {
  const methods = rules.map((rule, index) => {
    const options = create(MethodOptionsSchema);
    if (rule !== undefined) setExtension(options, http, create(HttpRuleSchema, rule));
    return { name: `Call${index}`, inputType: ".test.v1.Query", outputType: ".test.v1.Query", options, serverStreaming };
  });
  const file = create(FileDescriptorProtoSchema, {
    name: "test/v1/extra.proto",
    package: "test.v1",
    syntax: "proto3",
    messageType: [
      {
        name: "Query",
        field: [
          {
            name: "target_host",
            number: 1,
            type: FieldDescriptorProto_Type.STRING,
            label: FieldDescriptorProto_Label.OPTIONAL,
            jsonName: "targetHost",
          },
          {
            name: "max_hops",
            number: 2,
            type: FieldDescriptorProto_Type.INT32,
            label: FieldDescriptorProto_Label.OPTIONAL,
            jsonName: "maxHops",
          },
        ],
      },
    ],
    service: [{ name: "Extra", method: methods }],
  });
  const service = createFileRegistry(file, () => undefined).getService("test.v1.Extra");
  if (service === undefined) throw new Error("test service not built");
  return service;
}

describe("REST routes from google.api.http annotations", () => {
  it("serves the two contract routes of DiagnosticsService, its two batch routes and its two vantage streams, tool named by the path", () => {
    expect(
      restRoutesOf([DiagnosticsService]).map((route) => [route.verb, route.path, route.tool, route.method.name, route.streaming]),
    ).toEqual([
      ["GET", "/api/v1/is-site-down", "is-site-down", "CheckSite", false],
      ["GET", "/api/v1/redirect-check", "redirect-check", "TraceRedirects", false],
      ["POST", "/api/v1/batch/is-site-down", "is-site-down", "CheckSites", true],
      ["POST", "/api/v1/batch/redirect-check", "redirect-check", "TraceRedirectsBatch", true],
      ["POST", "/api/v1/vantages/is-site-down", "is-site-down", "VantageCheckSite", true],
      ["POST", "/api/v1/vantages/redirect-check", "redirect-check", "VantageTraceRedirects", true],
    ]);
  });

  it("serves post with the whole request as body, for unary and server-streaming methods", () => {
    const post = { pattern: { case: "post", value: "/api/v1/extra" }, body: "*" } as const;
    expect(restRoutesOf([serviceWith([post])]).map((route) => [route.verb, route.path, route.streaming])).toEqual([
      ["POST", "/api/v1/extra", false],
    ]);
    expect(restRoutesOf([serviceWith([post], true)]).map((route) => [route.verb, route.path, route.streaming])).toEqual([
      ["POST", "/api/v1/extra", true],
    ]);
  });

  it("adds a GET route for a new annotated RPC, and its additional bindings, with no other change", () => {
    const service = serviceWith([
      { pattern: { case: "get", value: "/api/v1/extra" }, additionalBindings: [{ pattern: { case: "get", value: "/api/v2/extra-too" } }] },
      undefined,
    ]);
    expect(restRoutesOf([service]).map((route) => [route.path, route.tool, route.method.name])).toEqual([
      ["/api/v1/extra", "extra", "Call0"],
      ["/api/v2/extra-too", "extra-too", "Call0"],
    ]);
  });

  it("stops start-up on a binding it cannot serve rather than drop the route", () => {
    expect(() => restRoutesOf([serviceWith([{ pattern: { case: "put", value: "/api/v1/extra" }, body: "*" }])])).toThrow(
      /only get and post bindings/,
    );
    expect(() => restRoutesOf([serviceWith([{ pattern: { case: "post", value: "/api/v1/extra" } }])])).toThrow(
      /takes the whole request as its body/,
    );
    expect(() => restRoutesOf([serviceWith([{ pattern: { case: "get", value: "/api/v1/extra" }, body: "*" }])])).toThrow(
      /a get binding has no body/,
    );
    expect(() => restRoutesOf([serviceWith([{ pattern: { case: "get", value: "/api/v1/{target_host}" } }])])).toThrow(/not a literal path/);
    expect(() => restRoutesOf([serviceWith([{ pattern: { case: "get", value: "/api/v1/extra" } }], true)])).toThrow(
      /only unary methods can have a get binding/,
    );
    const twice = serviceWith([{ pattern: { case: "get", value: "/api/v1/extra" } }, { pattern: { case: "get", value: "/api/v1/extra" } }]);
    expect(() => restRoutesOf([twice])).toThrow(/bound twice/);
  });
});

describe("query parameters onto request fields", () => {
  const input = serviceWith([undefined]).methods[0]?.input;
  if (input === undefined) throw new Error("no input message");
  const fields = (query: string) => {
    const { message, problem } = messageFromQuery(input, new URLSearchParams(query), ["api_key"]);
    return { message: message as unknown as Record<string, unknown>, problem };
  };

  it("takes a field by its proto name or its JSON name, and ignores api_key and unknown names", () => {
    expect(fields("target_host=a.test&maxHops=3&api_key=sd_x&utm_source=b")).toMatchObject({
      message: { targetHost: "a.test", maxHops: 3 },
      problem: undefined,
    });
    expect(fields("targetHost=a.test&max_hops=3")).toMatchObject({ message: { targetHost: "a.test", maxHops: 3 }, problem: undefined });
  });

  it("reports a single-value field given twice, even under its two names, and a value of the wrong type", () => {
    expect(fields("target_host=a.test&targetHost=b.test").problem).toBe("query parameter targetHost was given 2 times; give it once");
    expect(fields("max_hops=three").problem).toBe('query parameter maxHops: expected a whole number, got "three"');
    expect(fields("max_hops=2147483648").problem).toMatch(/^query parameter maxHops: expected a number from/);
  });
});
