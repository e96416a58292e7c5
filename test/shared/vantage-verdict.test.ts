import { describe, expect, it } from "vitest";
import {
  siteCheckReading,
  traceReading,
  type VantageReading,
  vantageVerdict,
  verdictNeedsALook,
  verdictTone,
} from "../../src/shared/vantage-verdict.js";

describe("the verdict over a call's vantages", () => {
  const U = "up";
  const D = "down";
  const B = "blocked";
  const none = undefined;
  it.each<[readonly (VantageReading | undefined)[], string]>([
    [[U, U, U], "up_everywhere"],
    [[U], "up_everywhere"],
    [[D, D], "down_everywhere"],
    [[D], "down_everywhere"],
    [[U, U, D], "down_in_some"],
    [[B, D], "down_in_some"],
    [[U, B, D], "down_in_some"],
    [[U, U, B], "blocked_in_some"],
    // The same refusal everywhere is the site's answer, which the contract counts as up.
    [[B, B], "up_everywhere"],
    // Entries without an answer (unavailable, refused) say nothing about the target: never "everywhere" with one.
    [[U, none], "up_where_answered"],
    [[U, U, none], "up_where_answered"],
    [[B, B, none], "up_where_answered"],
    [[D, none, none], "down_where_answered"],
    [[D, D, none], "down_where_answered"],
    [[U, D, none], "down_in_some"],
    [[B, D, none], "down_in_some"],
    [[U, B, none], "blocked_in_some"],
    [[none, none], "unavailable"],
    [[none], "unavailable"],
    [[], "unavailable"],
  ])("%j is %s", (readings, verdict) => {
    expect(vantageVerdict(readings)).toBe(verdict);
  });

  it("only up everywhere needs no look", () => {
    expect(verdictNeedsALook("up_everywhere")).toBe(false);
    for (const verdict of [
      "down_everywhere",
      "down_in_some",
      "blocked_in_some",
      "unavailable",
      "up_where_answered",
      "down_where_answered",
    ] as const)
      expect(verdictNeedsALook(verdict)).toBe(true);
  });

  it.each([
    ["up_everywhere", "good"],
    ["up_where_answered", "unsure"],
    ["blocked_in_some", "unsure"],
    ["unavailable", "unsure"],
    ["down_in_some", "bad"],
    ["down_everywhere", "bad"],
    ["down_where_answered", "bad"],
  ] as const)("%s is shown %s: green only when every vantage answered up", (verdict, tone) => {
    expect(verdictTone(verdict)).toBe(tone);
  });
});

describe("what one vantage's answer reads as", () => {
  it.each([
    [{ status: "up", statusCode: 200, proxyBlocked: false }, "up"],
    [{ status: "up", statusCode: 404, proxyBlocked: false }, "up"],
    [{ status: "up", statusCode: 403, proxyBlocked: false }, "blocked"],
    [{ status: "up", statusCode: 451, proxyBlocked: false }, "blocked"],
    [{ status: "up", statusCode: 429, proxyBlocked: true }, "blocked"],
    [{ status: "down", statusCode: 503, proxyBlocked: true }, "down"],
    [{ status: "down", statusCode: null, proxyBlocked: false }, "down"],
  ] as const)("a site check %j reads %s", (result, reading) => {
    expect(siteCheckReading(result)).toBe(reading);
  });

  it.each([
    [{ chainStatus: "healthy", finalStatus: 200 }, "up"],
    [{ chainStatus: "redirects_detected", finalStatus: 404 }, "up"],
    [{ chainStatus: "redirects_detected", finalStatus: 403 }, "blocked"],
    [{ chainStatus: "healthy", finalStatus: 451 }, "blocked"],
    [{ chainStatus: "healthy", finalStatus: 502 }, "down"],
    [{ chainStatus: "redirect_loop", finalStatus: 301 }, "down"],
    [{ chainStatus: "request_failed", finalStatus: null }, "down"],
    [{ chainStatus: "timeout", finalStatus: null }, "down"],
    [{ chainStatus: "too_many_redirects", finalStatus: 302 }, "down"],
  ] as const)("a trace %j reads %s", (result, reading) => {
    expect(traceReading(result)).toBe(reading);
  });
});
