/**
 * The page's own logic, without a browser: what it reads from the usage
 * headers, how it explains each refusal, the curl line, the address bar, and
 * how the waterfall lays requests on one axis, how a pasted batch is read and
 * its streamed items become rows and CSV.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  ChainStatus,
  CheckSitesResponseSchema,
  RequestDetailSchema,
  SiteStatus,
  TraceRedirectsBatchResponseSchema,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import { addressFromHash, hashOf } from "../../web/src/address.js";
import { toCsv } from "../../src/shared/batch-verdict.js";
import { parseBatch } from "../../web/src/batch-input.js";
import { checkRow, csvOf, notRunRow, traceRow, waitingRow } from "../../web/src/batch-rows.js";
import { barLabel, barsOf, measuredMs } from "../../web/src/bars.js";
import { batchCostText, creditsOf, latestCredits } from "../../web/src/credits.js";
import { overBudgetWords, rowsThatFit } from "../../web/src/batch-budget.js";
import { curlCommand } from "../../web/src/curl.js";
import { problemOf } from "../../web/src/problem.js";

describe("credits from the usage headers", () => {
  it("reads the X-RateLimit family", () => {
    const credits = creditsOf(
      new Headers({ "x-ratelimit-remaining": "293", "x-ratelimit-limit": "300", "x-ratelimit-reset": "1767225600" }),
    );
    expect(credits).toEqual({ remaining: 293, limit: 300, resetAt: new Date(1767225600_000), retryAfterSeconds: undefined });
  });

  it("falls back on the IETF RateLimit and RateLimit-Policy fields", () => {
    const credits = creditsOf(new Headers({ ratelimit: '"credits";r=12;t=60', "ratelimit-policy": '"credits";q=50;w=86400' }));
    expect(credits?.remaining).toBe(12);
    expect(credits?.limit).toBe(50);
    expect(credits?.resetAt).toBeInstanceOf(Date);
  });

  it("is unknown when the answer carried none (a 401 is refused before any charge)", () => {
    expect(creditsOf(new Headers())).toBeUndefined();
    expect(creditsOf(new Headers({ "x-ratelimit-remaining": "lots", "x-ratelimit-limit": "300" }))).toBeUndefined();
  });
});

describe("refusals as the page explains them", () => {
  it("401: the key was not accepted, with the service's words", () => {
    const { problem, credits } = problemOf(new ConnectError("a valid API key is required", Code.Unauthenticated));
    expect(problem.httpStatus).toBe(401);
    expect(problem.title).toBe("401: the API key was not accepted");
    expect(problem.detail).toContain("a valid API key is required");
    expect(credits).toBeUndefined();
  });

  it("429: when to try again, from Retry-After, and the credits left", () => {
    const metadata = new Headers({
      "retry-after": "120",
      "x-ratelimit-remaining": "1",
      "x-ratelimit-limit": "300",
      "x-ratelimit-reset": "1767225600",
    });
    const { problem, credits } = problemOf(
      new ConnectError("this call costs 5 credits but 1 of 300 are left", Code.ResourceExhausted, metadata),
    );
    expect(problem.httpStatus).toBe(429);
    expect(problem.detail).toMatch(/^this call costs 5 credits but 1 of 300 are left\. Try again after .+ \(in 2 min\)\.$/);
    expect(credits?.remaining).toBe(1);
  });

  it("429 with no Retry-After (no wait helps): the service's words, no time to try again, and what an operator can do", () => {
    const metadata = new Headers({ "x-ratelimit-remaining": "291", "x-ratelimit-limit": "300" });
    const said =
      "this call costs 400 credits, more than the whole budget of 300 in the rolling 24 h window, so no wait makes it affordable";
    const { problem } = problemOf(new ConnectError(said, Code.ResourceExhausted, metadata));
    expect(problem.detail).toBe(
      `${said}. Waiting will not help: an operator can raise this key's budget on the server (sitediag keys set-budget KEY_ID N; keys list shows the id), or run fewer items at once.`,
    );
    expect(problem.detail).not.toContain("Try again");
  });

  it("400: the refusal's reason as the service gave it", () => {
    const { problem } = problemOf(new ConnectError("url must use http or https", Code.InvalidArgument));
    expect(problem).toEqual({ title: "400: the request was refused", detail: "url must use http or https", httpStatus: 400 });
  });

  it("503: unavailable, in the service's words, which say when to retry", () => {
    const { problem } = problemOf(new ConnectError("the credit store is unreachable; try again shortly", Code.Unavailable));
    expect(problem).toEqual({
      title: "503: the service is unavailable",
      detail: "the credit store is unreachable; try again shortly.",
      httpStatus: 503,
    });
  });

  it("anything else, such as an unreachable service, as it came", () => {
    const { problem } = problemOf(new TypeError("Failed to fetch"));
    expect(problem.title).toMatch(/^The (call|service) failed/);
    expect(problem.detail).toContain("Failed to fetch");
  });
});

describe("copy as curl", () => {
  it("is the REST call with details, the key as $KEY in the header", () => {
    expect(curlCommand("http://127.0.0.1:8080", "trace", "https://a.test/x?y=1")).toBe(
      `curl -H "x-api-key: $KEY" 'http://127.0.0.1:8080/api/v1/redirect-check?url=https%3A%2F%2Fa.test%2Fx%3Fy%3D1&details=true'`,
    );
  });

  it("quotes for the shell whatever the URL holds", () => {
    const line = curlCommand("http://127.0.0.1:8080", "check", "it's");
    expect(line).toBe(`curl -H "x-api-key: $KEY" 'http://127.0.0.1:8080/api/v1/is-site-down?url=it%27s&details=true'`);
    // URLSearchParams leaves no quote unencoded; a quote that did reach the shell would be closed and reopened.
    expect(line.match(/'/g)?.length).toBe(2);
  });
});

describe("the address bar", () => {
  it("round-trips any URL, & and # included, with its operation", () => {
    const url = "https://a.test/p?q=1&r=2#frag";
    expect(addressFromHash(hashOf(url, "check"))).toEqual({ url, operation: "check" });
    expect(addressFromHash(hashOf(url, "trace"))).toEqual({ url, operation: "trace" });
  });

  it("holds nothing but the url, and op=trace for a trace (a check's link is as before)", () => {
    expect(hashOf("https://a.test/", "check")).toBe("#url=https%3A%2F%2Fa.test%2F");
    expect(hashOf("https://a.test/", "trace")).toBe("#url=https%3A%2F%2Fa.test%2F&op=trace");
    expect(addressFromHash("#url=a.test&op=nonsense")).toEqual({ url: "a.test", operation: "check" });
    expect(addressFromHash("")).toBeUndefined();
    expect(addressFromHash("#key=sd_x")).toBeUndefined();
  });
});

describe("the waterfall's bars", () => {
  type Phases = { dnsMs?: number; connectMs?: number; tlsMs?: number; waitingMs?: number; receivingMs?: number; otherMs?: number };
  const request = (totalMs: number, phases: Phases, failedAfterMs?: number, method = "HEAD", headFallback = false) =>
    create(RequestDetailSchema, {
      url: "https://a.test/",
      method,
      headFallback,
      timings: { totalMs, ...phases },
      ...(failedAfterMs === undefined
        ? {}
        : { failure: { stage: "tls", code: "tls_failed", reason: "TLS handshake failed", elapsedMs: failedAfterMs } }),
    });

  it("start each request where the previous one ended, on one axis", () => {
    const bars = barsOf([
      request(10, { dnsMs: 1, connectMs: 2, tlsMs: 3, waitingMs: 3.9, receivingMs: 0.1, otherMs: 0 }),
      request(5.3, { connectMs: 1, waitingMs: 4.2, otherMs: 0.1 }),
    ]);
    expect(bars.map((bar) => [bar.startMs, bar.totalMs])).toEqual([
      [0, 10],
      [10, 5.3],
    ]);
    expect(bars[0]?.segments.map((segment) => segment.phase)).toEqual(["dns", "connect", "tls", "waiting", "receiving"]);
  });

  it("draw the phases the service measured, which add up to the total, with what is left as Other; leave out phases that did not happen", () => {
    const [bar] = barsOf([request(5, { connectMs: 1, waitingMs: 2, receivingMs: 0.5, otherMs: 1.5 })]);
    expect(bar?.segments).toEqual([
      { phase: "connect", label: "Connect", ms: 1 },
      { phase: "waiting", label: "Waiting", ms: 2 },
      { phase: "receiving", label: "Receiving", ms: 0.5 },
      { phase: "other", label: "Other", ms: 1.5 },
    ]);
  });

  it("draw a server that accepted and never answered as a wait, not as Other", () => {
    const [bar] = barsOf([request(6000.9, { connectMs: 0.8, waitingMs: 6000, otherMs: 0.1 }, 6000.9)]);
    expect(bar?.segments.map((segment) => [segment.phase, segment.ms])).toEqual([
      ["connect", 0.8],
      ["waiting", 6000],
      ["other", 0.1],
    ]);
  });

  it("count a HEAD answered before the GET sent in its place as a request of its own, not a hop", () => {
    const bars = barsOf([request(2, {}), request(3, {}, undefined, "GET", true), request(4, {}, undefined, "GET")], 1);
    expect(bars.map((bar) => bar.role)).toEqual(["head", "hop", "page-read"]);
    expect(measuredMs(bars)).toBe(5);
  });

  it("tell a trace's hops from the extra read of its final page, and mark a failed request", () => {
    const roles = barsOf([request(5, {}), request(5, {}), request(5, {})], 2).map((bar) => bar.role);
    expect(roles).toEqual(["hop", "hop", "page-read"]);
    expect(barsOf([request(5, {}), request(0, {}, 3)], 1).map((bar) => bar.role)).toEqual(["hop", "failed"]);
    expect(barsOf([request(5, {})]).map((bar) => bar.role)).toEqual(["request"]);
  });

  it("run a failed request to the moment it failed", () => {
    const [bar] = barsOf([request(0, { connectMs: 1 }, 7)]);
    expect(bar?.totalMs).toBe(7);
  });
});

describe("a pasted batch", () => {
  it("takes one URL per line or url,expected CSV with a header, quotes, blank and # lines", () => {
    const parsed = parseBatch(
      ["url,expected", "https://a.test/old, https://a.test/new", "", "# a comment", '"https://b.test/?q=1,2",""', "https://c.test/"].join(
        "\r\n",
      ),
    );
    expect(parsed).toEqual({
      ok: true,
      entries: [
        { url: "https://a.test/old", expectedFinalUrl: "https://a.test/new" },
        { url: "https://b.test/?q=1,2", expectedFinalUrl: undefined },
        { url: "https://c.test/", expectedFinalUrl: undefined },
      ],
    });
  });

  it("says what is wrong with it, by line", () => {
    expect(parseBatch("  \n")).toEqual({ ok: false, problem: "Paste at least one URL." });
    expect(parseBatch('https://a.test/\n"https://b.test/')).toEqual({ ok: false, problem: "line 2: an unterminated quote" });
    expect(parseBatch("https://a.test/,https://b.test/,x")).toEqual({
      ok: false,
      problem: "line 1: more than two columns (url, expected final URL)",
    });
    expect(parseBatch(",https://b.test/")).toEqual({ ok: false, problem: "line 1: no URL in the first column" });
    expect(parseBatch(Array.from({ length: 101 }, (_, i) => `https://a.test/${i}`).join("\n"))).toEqual({
      ok: false,
      problem: "101 URLs: a batch takes at most 100.",
    });
  });

  it("downloads as CSV that a spreadsheet reads as text", () => {
    expect(toCsv([["a", "b,c", 'say "hi"', "=HYPERLINK(1)", "-1"]])).toBe(`a,"b,c","say ""hi""",'=HYPERLINK(1),'-1\r\n`);
  });
});

describe("streamed batch items as rows", () => {
  const entry = { url: "https://a.test/old", expectedFinalUrl: "https://a.test/new" };

  it("a trace that misses its expectation failed, with the reason and its code", () => {
    const item = create(TraceRedirectsBatchResponseSchema, {
      index: 0,
      url: entry.url,
      outcome: {
        case: "result",
        value: { finalUrl: "https://a.test/new", finalStatus: 200, redirects: 1, chainStatus: ChainStatus.REDIRECTS_DETECTED },
      },
      expectation: { matches: false, reason: "a temporary redirect" },
    });
    expect(traceRow(waitingRow(0, entry), item).record).toMatchObject({
      verdict: "FAIL",
      code: "expectation_not_met",
      reason: "expectation not met: a temporary redirect",
      finalStatus: "200",
    });
  });

  it("a healthy chain ending in a 404 failed although it has no expectation", () => {
    const item = create(TraceRedirectsBatchResponseSchema, {
      index: 0,
      url: entry.url,
      outcome: {
        case: "result",
        value: {
          finalUrl: entry.url,
          finalStatus: 404,
          chainStatus: ChainStatus.HEALTHY,
          chain: [{ hop: 1, url: entry.url, status: 404, statusText: "Not Found" }],
        },
      },
    });
    const row = traceRow(waitingRow(0, { url: entry.url, expectedFinalUrl: undefined }), item);
    expect(row.record).toMatchObject({
      verdict: "FAIL",
      code: "final_status_error",
      reason: "the final URL answers 404 Not Found",
      hops: "1",
    });
    expect(row.result?.kind).toBe("trace");
  });

  it("an item error is a failed row with its message and code; a down site failed with its reason", () => {
    const error = create(CheckSitesResponseSchema, {
      index: 1,
      url: "ftp://x",
      outcome: { case: "error", value: { code: "invalid_argument", message: "url must use http or https" } },
    });
    expect(checkRow(waitingRow(1, { url: "ftp://x", expectedFinalUrl: undefined }), error).record).toMatchObject({
      verdict: "FAIL",
      code: "invalid_argument",
      reason: "not checked: url must use http or https",
    });
    const down = create(CheckSitesResponseSchema, {
      index: 0,
      url: entry.url,
      outcome: { case: "result", value: { status: SiteStatus.DOWN, reason: "Connection refused" } },
    });
    expect(checkRow(waitingRow(0, entry), down).record).toMatchObject({
      verdict: "FAIL",
      code: "site_down",
      reason: "down: Connection refused",
    });
  });

  it("a row the batch never reached is NOT RUN with why; a finished row stays as it is", () => {
    const waiting = waitingRow(2, entry);
    expect(notRunRow(waiting, "stopped before it ran")).toMatchObject({
      state: "not run",
      record: { verdict: "NOT RUN", reason: "stopped before it ran" },
    });
    const up = create(CheckSitesResponseSchema, {
      index: 0,
      url: entry.url,
      outcome: { case: "result", value: { status: SiteStatus.UP, statusCode: 200, finalUrl: entry.url } },
    });
    const done = checkRow(waiting, up);
    expect(notRunRow(done, "stopped")).toBe(done);
    expect(csvOf([done]).split("\r\n")[1]).toBe(
      `3,${entry.url},${entry.url.replace("old", "new")},,PASS,,,200,${entry.url},1,200 ${entry.url}`,
    );
  });
});

describe("a batch weighed against the credits read before it is sent", () => {
  const credits = { remaining: 291, limit: 300, resetAt: new Date(2026, 10, 26, 9, 5), retryAfterSeconds: undefined };

  it("counts the rows that fit, all of them when the credits are not known", () => {
    expect(rowsThatFit("trace", 89, credits)).toBe(58);
    expect(rowsThatFit("check", 89, credits)).toBe(89);
    expect(rowsThatFit("trace", 89, undefined)).toBe(89);
    expect(rowsThatFit("trace", 3, { ...credits, remaining: 4 })).toBe(0);
  });

  it("says what fits, offers the first rows, and names keys set-budget only when no wait helps", () => {
    expect(overBudgetWords("trace", 89, 58, credits)).toEqual({
      reason: "over the budget: the key's 291 credits left pay for 58 traces",
      status: "Not run: 89 traces cost 445 credits; this key has 291 of 300 left, enough for 58.",
      offer:
        "58 of these 89 rows fit now. At most 60 traces fit the key's whole budget of 300: run the rest later from this table, or an operator can raise the budget (sitediag keys set-budget KEY_ID N).",
      first: "Trace the first 58 now",
    });
    const waiting = overBudgetWords("check", 20, 0, { ...credits, remaining: 1 });
    expect(waiting.offer).toBe("0 of these 20 rows fit now. Run the rest later from this table: credits start to free up at 09:05.");
    expect(waiting.first).toBeUndefined();
  });
});

describe("a batch's cost before it runs", () => {
  it("is said in credits, and weighed against what the latest answer said the key has", () => {
    expect(batchCostText(80, undefined)).toBe("80 URLs: Check all costs 160 credits, Trace all 400.");
    const at = new Date(2026, 10, 26, 8, 31);
    const credits = { remaining: 291, limit: 300, resetAt: undefined, retryAfterSeconds: undefined };
    expect(batchCostText(80, { credits, at })).toBe(
      "80 URLs: Check all costs 160 credits, Trace all 400. This key had 291 of 300 left at 08:31. " +
        "Trace all costs more than the whole budget of 300: no wait makes it affordable; at most 60 traces fit in one batch.",
    );
    expect(batchCostText(1, { credits: { ...credits, remaining: 3 }, at })).toBe(
      "1 URL: Check all costs 2 credits, Trace all 5. This key had 3 of 300 left at 08:31. Trace all costs more than the 3 left.",
    );
  });

  it("knows the credits of the latest answer that carried usage headers", () => {
    creditsOf(new Headers({ "x-ratelimit-remaining": "17", "x-ratelimit-limit": "300" }));
    creditsOf(new Headers());
    expect(latestCredits()?.credits.remaining).toBe(17);
  });
});

describe("a waterfall bar's label", () => {
  const bar = (index: number, method: string, url: string) => ({
    index,
    role: "hop" as const,
    request: create(RequestDetailSchema, { method, url }),
  });

  it("names the host where it changes (its scheme when only that did) and the path where only the path does, so rows of one site tell apart", () => {
    const urls = ["http://a.test/old", "https://a.test/old", "https://www.a.test/", "https://www.a.test/en/", "https://www.a.test/en/shop"];
    const labels = urls.map((url, row) => barLabel(bar(row + 1, "HEAD", url), urls[row - 1]));
    expect(labels).toEqual(["1 HEAD a.test/old", "2 HEAD https /old", "3 HEAD www.a.test", "4 HEAD /en/", "5 HEAD /en/shop"]);
    expect(new Set(labels).size).toBe(labels.length);
  });

  it("cuts a long label in the middle, so both ends show, and never throws on a URL that does not parse", () => {
    const long = barLabel(bar(12, "GET", "https://a-very-long-host-name.example.test/and/a/long/path/to-the-page"), undefined);
    expect(long).toHaveLength(23);
    expect(long.startsWith("12 GET a-ve")).toBe(true);
    expect(long.endsWith("to-the-page")).toBe(true);
    expect(barLabel(bar(1, "GET", "not a url"), "also not")).toBe("1 GET not a url");
  });
});
