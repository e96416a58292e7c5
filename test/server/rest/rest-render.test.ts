import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  ChainHopSchema,
  ChainStatus,
  CheckSiteResponseSchema,
  DetailsSchema,
  FailedStage,
  RedirectHopSchema,
  SiteStatus,
  TraceRedirectsResponseSchema,
  TraceWarningSchema,
  WarningSeverity,
} from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { renderMessage, RestRenderError } from "../../../src/server/rest/rest-render.js";

// Field names, order and nullability from the spec's tables 2.2 and 2.3.
const SITE_CHECK_FIELDS = [
  "requestedUrl",
  "finalUrl",
  "status",
  "statusCode",
  "statusText",
  "responseTime",
  "reason",
  "failedStage",
  "redirectHops",
  "proxyBlocked",
];
const TRACE_FIELDS = ["input", "redirects", "finalUrl", "finalStatus", "totalTimeMs", "chainStatus", "chain", "warnings"];
const HOP_FIELDS = ["hop", "url", "hostname", "status", "statusText", "location", "redirectType", "responseTimeMs", "upgradedToHttps"];

describe("REST rendering of a site check", () => {
  it("shows a failed check with every unset optional field as null, and no redirect hops as null", () => {
    const message = create(CheckSiteResponseSchema, {
      requestedUrl: "http://127.0.0.1:9/",
      status: SiteStatus.DOWN,
      reason: "Connection refused",
      failedStage: FailedStage.CONNECT,
    });
    const data = renderMessage(CheckSiteResponseSchema, message);
    expect(Object.keys(data)).toEqual(SITE_CHECK_FIELDS);
    expect(data).toEqual({
      requestedUrl: "http://127.0.0.1:9/",
      finalUrl: null,
      status: "down",
      statusCode: null,
      statusText: null,
      responseTime: null,
      reason: "Connection refused",
      failedStage: "connect",
      redirectHops: null,
      proxyBlocked: false,
    });
  });

  it("shows an up result with integers as JSON numbers and redirect hops as an ordered array", () => {
    const message = create(CheckSiteResponseSchema, {
      requestedUrl: "http://127.0.0.1/a",
      finalUrl: "http://127.0.0.1/b",
      status: SiteStatus.UP,
      statusCode: 404,
      statusText: "Not Found",
      responseTime: 0,
      redirectHops: [create(RedirectHopSchema, { url: "http://127.0.0.1/a", status: 301 })],
      proxyBlocked: true,
    });
    expect(renderMessage(CheckSiteResponseSchema, message)).toEqual({
      requestedUrl: "http://127.0.0.1/a",
      finalUrl: "http://127.0.0.1/b",
      status: "up",
      statusCode: 404,
      statusText: "Not Found",
      // Zero is a value, not an absence: explicit presence keeps it.
      responseTime: 0,
      reason: null,
      failedStage: null,
      redirectHops: [{ url: "http://127.0.0.1/a", status: 301 }],
      proxyBlocked: true,
    });
  });

  it("leaves details out when unset, and shows them after the contract's fields when set, nulls included", () => {
    const bare = create(CheckSiteResponseSchema, { requestedUrl: "http://127.0.0.1/", status: SiteStatus.UP });
    expect(Object.keys(renderMessage(CheckSiteResponseSchema, bare))).toEqual(SITE_CHECK_FIELDS);
    const detailed = create(CheckSiteResponseSchema, {
      requestedUrl: "http://127.0.0.1/",
      status: SiteStatus.UP,
      details: create(DetailsSchema, {}),
    });
    const data = renderMessage(CheckSiteResponseSchema, detailed);
    expect(Object.keys(data)).toEqual([...SITE_CHECK_FIELDS, "details"]);
    expect(data.details).toEqual({
      code: null,
      requests: [],
      proxy: null,
      clientRedirect: null,
      resolutions: [],
      families: null,
      warnings: [],
      search: null,
      addresses: null,
      tlsVersions: null,
      registration: null,
    });
  });

  it("refuses to show an enum value that has no REST string instead of inventing one", () => {
    const message = create(CheckSiteResponseSchema, { requestedUrl: "http://127.0.0.1/", status: SiteStatus.UNSPECIFIED });
    expect(() => renderMessage(CheckSiteResponseSchema, message)).toThrow(RestRenderError);
  });
});

describe("REST rendering of a redirect trace", () => {
  it("shows empty warnings as [], unvisited final status as null, and hops with null location", () => {
    const message = create(TraceRedirectsResponseSchema, {
      input: "127.0.0.1",
      redirects: 0,
      finalUrl: "https://127.0.0.1/",
      finalStatus: 200,
      totalTimeMs: 12,
      chainStatus: ChainStatus.HEALTHY,
      chain: [
        create(ChainHopSchema, {
          hop: 1,
          url: "https://127.0.0.1/",
          hostname: "127.0.0.1",
          status: 200,
          statusText: "OK",
          responseTimeMs: 12,
        }),
      ],
    });
    const data = renderMessage(TraceRedirectsResponseSchema, message);
    expect(Object.keys(data)).toEqual(TRACE_FIELDS);
    expect(data.warnings).toEqual([]);
    expect(data.chainStatus).toBe("Healthy");
    const [hop] = data.chain as Record<string, unknown>[];
    expect(Object.keys(hop ?? {})).toEqual(HOP_FIELDS);
    expect(hop).toEqual({
      hop: 1,
      url: "https://127.0.0.1/",
      hostname: "127.0.0.1",
      status: 200,
      statusText: "OK",
      location: null,
      redirectType: null,
      responseTimeMs: 12,
      upgradedToHttps: false,
    });
  });

  it("shows each chainStatus with the contract's exact wording", () => {
    const wording = new Map([
      [ChainStatus.HEALTHY, "Healthy"],
      [ChainStatus.REDIRECTS_DETECTED, "Redirects detected"],
      [ChainStatus.REDIRECT_LOOP, "Redirect loop"],
      [ChainStatus.TOO_MANY_REDIRECTS, "Too many redirects"],
      [ChainStatus.REQUEST_FAILED, "Request failed"],
      [ChainStatus.TIMEOUT, "Timeout"],
    ]);
    for (const [chainStatus, text] of wording) {
      const data = renderMessage(TraceRedirectsResponseSchema, create(TraceRedirectsResponseSchema, { chainStatus }));
      expect(data.chainStatus).toBe(text);
    }
  });

  it("shows a warning about the whole chain with hop null, and one about a hop with its number", () => {
    const message = create(TraceRedirectsResponseSchema, {
      chainStatus: ChainStatus.REDIRECT_LOOP,
      finalUrl: "http://127.0.0.1/a",
      warnings: [
        create(TraceWarningSchema, { code: "redirect_loop", message: "Loop", severity: WarningSeverity.PROBLEM }),
        create(TraceWarningSchema, { code: "https_downgrade", message: "Downgrade", hop: 2, severity: WarningSeverity.PROBLEM }),
      ],
    });
    const data = renderMessage(TraceRedirectsResponseSchema, message);
    expect(data.finalStatus).toBeNull();
    expect(data.warnings).toEqual([
      { code: "redirect_loop", message: "Loop", hop: null, severity: "problem" },
      { code: "https_downgrade", message: "Downgrade", hop: 2, severity: "problem" },
    ]);
  });
});
