import { describe, expect, it } from "vitest";
import type { RedirectTraceResult, TraceHop } from "../../src/diagnostics/redirect-trace-result.js";
import { judgeExpectation } from "../../src/diagnostics/redirect-chain.js";

function hop(n: number, url: string, status: number, location: string | null = null): TraceHop {
  return {
    hop: n,
    url,
    hostname: new URL(url).hostname,
    status,
    statusText: "",
    location,
    redirectType: location === null ? null : `${status}`,
    responseTimeMs: 1,
    upgradedToHttps: url.startsWith("http:") && location?.startsWith("https:") === true,
  };
}

function trace(
  chain: TraceHop[],
  chainStatus: RedirectTraceResult["chainStatus"],
  finalStatus: number | null = chain.at(-1)?.status ?? null,
): RedirectTraceResult {
  return {
    input: chain[0]?.url ?? "",
    redirects: chain.filter((entry) => entry.location !== null).length,
    finalUrl: chain.at(-1)?.url ?? "",
    finalStatus,
    totalTimeMs: 3,
    chainStatus,
    chain,
    warnings: [],
  };
}

const OLD = "https://old.test/page";
const NEW = "https://new.test/page";

describe("judgeExpectation: what a site migration asks of an old URL", () => {
  it.each([
    [
      "a permanent redirect to the expected URL with 200",
      trace([hop(1, OLD, 301, NEW), hop(2, NEW, 200)], "redirects_detected"),
      NEW,
      { matches: true },
    ],
    [
      "308 counts as permanent; the comparison is on the WHATWG form",
      trace([hop(1, OLD, 308, NEW), hop(2, NEW, 200)], "redirects_detected"),
      "HTTPS://NEW.test:443/page#top",
      { matches: true },
    ],
    ["already at the expected URL", trace([hop(1, NEW, 204)], "healthy"), NEW, { matches: true }],
  ] as const)("%s: matches", (_name, result, expected, verdict) => {
    expect(judgeExpectation(result, expected)).toEqual(verdict);
  });

  it.each([
    [
      "wrong destination",
      trace([hop(1, OLD, 301, "https://new.test/other"), hop(2, "https://new.test/other", 200)], "redirects_detected"),
      /ends at https:\/\/new\.test\/other, not at https:\/\/new\.test\/page/,
    ],
    [
      "a temporary redirect on the way",
      trace([hop(1, OLD, 302, NEW), hop(2, NEW, 200)], "redirects_detected"),
      /hop 1 is a temporary redirect/,
    ],
    ["the new URL answers 404", trace([hop(1, OLD, 301, NEW), hop(2, NEW, 404)], "redirects_detected"), /answers 404, not a 2xx/],
    ["a loop", trace([hop(1, OLD, 301, NEW), hop(2, NEW, 301, OLD)], "redirect_loop", null), /did not end: redirect loop/],
    [
      "a downgrade to http",
      trace([hop(1, OLD, 301, "http://new.test/page"), hop(2, "http://new.test/page", 301, NEW), hop(3, NEW, 200)], "redirects_detected"),
      /hop 1 downgrades from https to http/,
    ],
    ["a failed request", trace([hop(1, OLD, 301, NEW)], "request_failed", null), /did not end: request failed/],
    ["an expectation that is no URL", trace([hop(1, NEW, 200)], "healthy"), /is not an absolute URL/],
  ] as const)("%s: does not match, and says why", (name, result, reason) => {
    const verdict = judgeExpectation(result, name === "an expectation that is no URL" ? "new.test/page" : NEW);
    expect(verdict.matches).toBe(false);
    if (!verdict.matches) expect(verdict.reason).toMatch(reason);
  });
});
