import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  CheckSiteResponseSchema,
  FailedStage,
  SiteStatus,
  TraceRedirectsResponseSchema,
  ChainStatus,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import { vantageDifferences } from "../../src/service/vantage-differences.js";

// What differs between the regions that answered, aspect by aspect.

function resolved(addresses: readonly string[], servers: readonly string[], rcode?: string) {
  return {
    resolutions: [
      {
        name: "a.test",
        source: { kind: "configured", servers: [...servers] },
        answers: addresses.map((address) => ({ address, family: 4 })),
        ...(rcode === undefined ? {} : { rcode }),
      },
    ],
  };
}

describe("the differences between vantages", () => {
  it("names each aspect that differs, each value with the vantages that saw it; an aspect all agree on is left out", () => {
    const up = (name: string) => ({
      name,
      kind: "site-check" as const,
      data: create(CheckSiteResponseSchema, {
        requestedUrl: "http://a.test/",
        finalUrl: "http://a.test/",
        status: SiteStatus.UP,
        statusCode: 200,
        details: Object.assign(resolved(["127.0.0.1"], [`127.0.0.${name === "eu-west" ? 5 : 6}:53`]), {
          requests: [{ url: "http://a.test/", method: "GET", tls: { certificate: { fingerprintSha256: "AA:BB" } } }],
        }),
      }),
    });
    const down = {
      name: "ap-south",
      kind: "site-check" as const,
      data: create(CheckSiteResponseSchema, {
        requestedUrl: "http://a.test/",
        status: SiteStatus.DOWN,
        failedStage: FailedStage.DNS,
        details: Object.assign(resolved([], ["127.0.0.7:53"], "NXDOMAIN"), { requests: [] }),
      }),
    };
    const differences = vantageDifferences([down, up("eu-west"), up("us-east")]);
    expect(differences.map((difference) => [difference.aspect, difference.values.map((value) => [value.value, value.vantages])])).toEqual([
      [
        "addresses",
        [
          ["NXDOMAIN", ["ap-south"]],
          ["127.0.0.1", ["eu-west", "us-east"]],
        ],
      ],
      [
        "resolver",
        [
          ["configured 127.0.0.7:53", ["ap-south"]],
          ["configured 127.0.0.5:53", ["eu-west"]],
          ["configured 127.0.0.6:53", ["us-east"]],
        ],
      ],
      [
        "status",
        [
          ["none", ["ap-south"]],
          ["200", ["eu-west", "us-east"]],
        ],
      ],
      [
        "final_url",
        [
          ["none", ["ap-south"]],
          ["http://a.test/", ["eu-west", "us-east"]],
        ],
      ],
      [
        "certificate",
        [
          ["none", ["ap-south"]],
          ["AA:BB", ["eu-west", "us-east"]],
        ],
      ],
      [
        "failed_stage",
        [
          ["dns", ["ap-south"]],
          ["none", ["eu-west", "us-east"]],
        ],
      ],
    ]);
  });

  it("nothing when they agree, or when fewer than two answered; aspects unknown without details are left out", () => {
    const trace = (name: string, status: number) => ({
      name,
      kind: "trace" as const,
      data: create(TraceRedirectsResponseSchema, {
        input: "http://a.test/",
        finalUrl: "http://a.test/",
        finalStatus: status,
        chainStatus: ChainStatus.HEALTHY,
      }),
    });
    expect(vantageDifferences([trace("a", 200), trace("b", 200)])).toEqual([]);
    expect(vantageDifferences([trace("a", 200)])).toEqual([]);
    expect(vantageDifferences([trace("a", 200), trace("b", 503)]).map((difference) => difference.aspect)).toEqual(["status"]);
  });

  it("bounds a long value a target sent", () => {
    const trace = (name: string, url: string) => ({
      name,
      kind: "trace" as const,
      data: create(TraceRedirectsResponseSchema, {
        input: "http://a.test/",
        finalUrl: url,
        finalStatus: 200,
        chainStatus: ChainStatus.HEALTHY,
      }),
    });
    const [difference] = vantageDifferences([trace("a", `http://a.test/${"x".repeat(5_000)}`), trace("b", "http://b.test/")]);
    expect(difference?.values[0]?.value.length).toBeLessThanOrEqual(301);
  });
});
