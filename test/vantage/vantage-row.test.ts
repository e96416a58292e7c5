import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  ChainStatus,
  CheckSiteResponseSchema,
  SiteStatus,
  TraceRedirectsResponseSchema,
  WarningSeverity,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import { siteCheckRowWords, traceRowWords } from "../../src/vantage/vantage-row.js";

// What one vantage's row says: the words of a single answer, never a bare
// status with an empty reason.

const site = (fields: Parameters<typeof create<typeof CheckSiteResponseSchema>>[1]) =>
  create(CheckSiteResponseSchema, Object.assign({ requestedUrl: "http://a.test/" }, fields));
const trace = (fields: Parameters<typeof create<typeof TraceRedirectsResponseSchema>>[1]) =>
  create(TraceRedirectsResponseSchema, Object.assign({ input: "http://a.test/", finalUrl: "http://a.test/" }, fields));

describe("a site check's row", () => {
  it("a Cloudflare challenge: CHALLENGED and the provider's sentence", () => {
    const words = siteCheckRowWords(
      site({
        status: SiteStatus.UP,
        statusCode: 403,
        proxyBlocked: true,
        details: { proxy: { provider: "cloudflare", kind: "challenge" } },
      }),
    );
    expect(words).toEqual({
      reading: "blocked",
      word: "CHALLENGED",
      code: null,
      reason: "Reachable, but a Cloudflare challenge answered: a browser may pass it; automated clients won't",
    });
  });

  it("a proxy's block without details: BLOCKED, saying who answered what", () => {
    expect(
      siteCheckRowWords(site({ status: SiteStatus.UP, statusCode: 429, statusText: "Too Many Requests", proxyBlocked: true })),
    ).toMatchObject({ word: "BLOCKED", reason: "A proxy or CDN answered 429 Too Many Requests" });
  });

  it("down: the reason and its failure code", () => {
    expect(
      siteCheckRowWords(
        site({ status: SiteStatus.DOWN, reason: "DNS lookup failed: no such host", details: { code: "dns_no_such_host" } }),
      ),
    ).toEqual({
      reading: "down",
      word: "DOWN",
      code: "dns_no_such_host",
      reason: "DNS lookup failed: no such host",
    });
  });

  it("up with a 404: final_status_error, the answer in words", () => {
    expect(siteCheckRowWords(site({ status: SiteStatus.UP, statusCode: 404, statusText: "Not Found" }))).toEqual({
      reading: "up",
      word: "UP",
      code: "final_status_error",
      reason: "Up, but the final URL answers 404 Not Found",
    });
  });

  it("a plain 403: BLOCKED with final_status_error", () => {
    expect(siteCheckRowWords(site({ status: SiteStatus.UP, statusCode: 403, statusText: "Forbidden" }))).toMatchObject({
      word: "BLOCKED",
      code: "final_status_error",
    });
  });

  it("up and nothing amiss: nothing to say", () => {
    expect(siteCheckRowWords(site({ status: SiteStatus.UP, statusCode: 200 }))).toEqual({
      reading: "up",
      word: "UP",
      code: null,
      reason: null,
    });
  });
});

describe("a trace's row", () => {
  it("a chain ending at a 503: DOWN, final_status_error, never a bare 'Healthy 503'", () => {
    const words = traceRowWords(
      trace({
        chainStatus: ChainStatus.HEALTHY,
        finalStatus: 503,
        chain: [{ url: "http://a.test/", status: 503, statusText: "Service Unavailable" }],
      }),
    );
    expect(words).toEqual({
      reading: "down",
      word: "DOWN",
      code: "final_status_error",
      reason: "The final URL answers 503 Service Unavailable",
    });
  });

  it("a chain that did not end: its last warning's code and words", () => {
    const words = traceRowWords(
      trace({
        chainStatus: ChainStatus.REQUEST_FAILED,
        warnings: [{ code: "dns_no_such_host", message: "DNS lookup failed", severity: WarningSeverity.PROBLEM }],
      }),
    );
    expect(words).toEqual({ reading: "down", word: "DOWN", code: "dns_no_such_host", reason: "Request failed: DNS lookup failed" });
  });

  it("a challenge at its end: CHALLENGED and the provider's sentence", () => {
    const words = traceRowWords(
      trace({ chainStatus: ChainStatus.HEALTHY, finalStatus: 403, details: { proxy: { provider: "cloudflare", kind: "challenge" } } }),
    );
    expect(words).toMatchObject({
      reading: "blocked",
      word: "CHALLENGED",
      code: "final_status_error",
      reason: expect.stringContaining("Cloudflare challenge") as string,
    });
  });

  it("a healthy chain: UP, nothing to say", () => {
    expect(traceRowWords(trace({ chainStatus: ChainStatus.REDIRECTS_DETECTED, finalStatus: 200 }))).toEqual({
      reading: "up",
      word: "UP",
      code: null,
      reason: null,
    });
  });
});
