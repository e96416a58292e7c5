import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RedirectTraceResult } from "../../src/diagnostics/redirect-trace.js";
import type { DiagnosticEnv } from "../../src/diagnostics/diagnostic-call.js";
import type { Prober } from "../../src/probe/hop-types.js";
import { routeChain, startTraceTarget, type TraceTarget } from "../fixtures/trace-targets.js";
import { traceEnv, traceResult, loopbackProber, traceRedirects, REPORTED } from "../fixtures/test-env.js";

let site: TraceTarget;
let other: TraceTarget;
let prober: Prober;
let env: DiagnosticEnv;

beforeAll(async () => {
  site = await startTraceTarget();
  // A second host (127.0.0.2) for host changes.
  other = await startTraceTarget({ host: "127.0.0.2" });
  prober = loopbackProber();
  env = traceEnv(prober, { tracePorts: [site.port, other.port] });
});

afterAll(async () => {
  await prober.close();
  await site.close();
  await other.close();
});

const trace = (input: string) => traceResult(input, env);

const codes = (result: RedirectTraceResult) => result.warnings.map((warning) => warning.code);

describe("healthy chains", () => {
  it("reports a direct 200 as Healthy with one hop and no warnings", async () => {
    site.route("/ok", { kind: "status", status: 200 });
    const result = await trace(site.url("/ok"));
    expect(result).toMatchObject({
      input: site.url("/ok"),
      redirects: 0,
      finalUrl: site.url("/ok"),
      finalStatus: 200,
      chainStatus: "healthy",
      warnings: [],
    });
    expect(result.chain).toEqual([
      {
        hop: 1,
        url: site.url("/ok"),
        hostname: "127.0.0.1",
        status: 200,
        statusText: "OK",
        location: null,
        redirectType: null,
        responseTimeMs: expect.any(Number),
        upgradedToHttps: false,
      },
    ]);
    expect(Number.isInteger(result.totalTimeMs)).toBe(true);
  });

  it("keeps a direct 404 Healthy but warns that the final response is an error (after checking it with GET)", async () => {
    const result = await trace(site.url("/nowhere"));
    expect(result).toMatchObject({ chainStatus: "healthy", redirects: 0, finalStatus: 404 });
    expect(result.warnings).toEqual([
      { code: "head_refused_get_used", message: "HEAD answered 404 Not Found; the hop was retried with GET", hop: 1, severity: "info" },
      { code: "final_status_error", message: "The final response is 404 Not Found", hop: 1, severity: "problem" },
    ]);
    expect(site.requests.filter((request) => request.path === "/nowhere").map((request) => request.method)).toEqual(["HEAD", "GET"]);
  });

  it("echoes the input exactly as supplied, untrimmed", async () => {
    site.route("/ok", { kind: "status", status: 200 });
    const input = `  ${site.url("/ok")}`;
    expect((await trace(input)).input).toBe(input);
  });
});

describe("redirects", () => {
  it("follows relative, protocol-relative and absolute Locations, resolving each to an absolute URL", async () => {
    site.route("/relative", { kind: "redirect", status: 301, location: "protocol-relative" });
    site.route("/protocol-relative", { kind: "redirect", status: 308, location: `//127.0.0.1:${site.port}/absolute` });
    site.route("/absolute", { kind: "redirect", status: 301, location: site.url("/landing") });
    site.route("/landing", { kind: "status", status: 200 });
    const result = await trace(site.url("/relative"));
    expect(result).toMatchObject({
      chainStatus: "redirects_detected",
      redirects: 3,
      finalUrl: site.url("/landing"),
      finalStatus: 200,
      warnings: [],
    });
    expect(result.chain.map((hop) => [hop.hop, hop.url, hop.status, hop.location, hop.redirectType])).toEqual([
      [1, site.url("/relative"), 301, site.url("/protocol-relative"), "301 Moved Permanently"],
      [2, site.url("/protocol-relative"), 308, site.url("/absolute"), "308 Permanent Redirect"],
      [3, site.url("/absolute"), 301, site.url("/landing"), "301 Moved Permanently"],
      [4, site.url("/landing"), 200, null, null],
    ]);
  });

  it("without details (as the service asks), the same result but no request records", async () => {
    routeChain(site, 3, "/lean-end");
    site.route("/lean-end", { kind: "status", status: 200 });
    const full = await traceResult(site.url("/r/1"), env, REPORTED);
    const lean = await traceRedirects(site.url("/r/1"), env);
    if (lean.kind !== "result") throw new Error(lean.kind);
    expect(full.details?.requests.filter((request) => request.report?.kind === "position")).toHaveLength(4);
    const timeless = (result: RedirectTraceResult) => ({
      ...result,
      totalTimeMs: 0,
      chain: result.chain.map((hop) => ({ ...hop, responseTimeMs: 0 })),
    });
    expect(lean.result.details).toBeUndefined();
    expect(timeless(lean.result)).toEqual({ ...timeless(full), details: undefined });
  });

  it("follows 20 redirects to the end", async () => {
    routeChain(site, 20, "/end-of-20");
    site.route("/end-of-20", { kind: "status", status: 200 });
    const result = await trace(site.url("/r/1"));
    expect(result).toMatchObject({ chainStatus: "redirects_detected", redirects: 20, finalUrl: site.url("/end-of-20"), finalStatus: 200 });
    expect(result.chain).toHaveLength(21);
    expect(codes(result)).toEqual(["long_chain"]);
  });

  it("stops a 21st redirect as Too many redirects, naming the unvisited next target", async () => {
    const chainSite = await startTraceTarget();
    try {
      routeChain(chainSite, 22, "/never");
      const result = await traceRedirects(chainSite.url("/r/1"), { ...env, tracePorts: [chainSite.port] });
      if (result.kind !== "result") throw new Error(result.kind);
      expect(result.result).toMatchObject({
        chainStatus: "too_many_redirects",
        redirects: 21,
        finalUrl: chainSite.url("/r/22"),
        finalStatus: null,
      });
      expect(result.result.chain).toHaveLength(21);
      expect(chainSite.requests.map((request) => request.path)).not.toContain("/r/22");
      expect(codes(result.result)).toEqual(["long_chain", "too_many_redirects"]);
    } finally {
      await chainSite.close();
    }
  });

  it("warns about temporary redirects, host changes and chains longer than 3 redirects", async () => {
    site.route("/t1", { kind: "redirect", status: 302, location: "/t2" });
    site.route("/t2", { kind: "redirect", status: 303, location: "/t3" });
    site.route("/t3", { kind: "redirect", status: 307, location: other.url("/t4") });
    other.route("/t4", { kind: "redirect", status: 301, location: "/t5" });
    other.route("/t5", { kind: "status", status: 500 });
    const result = await trace(site.url("/t1"));
    expect(result).toMatchObject({ chainStatus: "redirects_detected", redirects: 4, finalUrl: other.url("/t5"), finalStatus: 500 });
    expect(result.chain.map((hop) => hop.hostname)).toEqual(["127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2"]);
    expect(result.warnings.map((warning) => [warning.code, warning.hop])).toEqual([
      ["temporary_redirect", 1],
      ["temporary_redirect", 2],
      ["temporary_redirect", 3],
      ["host_changed", 3],
      ["head_refused_get_used", 5],
      ["final_status_error", 5],
      ["long_chain", null],
    ]);
    expect(result.warnings[3]?.message).toBe("Hop 3 moves from host 127.0.0.1 to 127.0.0.2");
  });

  it("does not follow a 300 or 304 even with a Location: they are answers, not redirects", async () => {
    site.route("/choices", { kind: "redirect", status: 300, location: "/elsewhere" });
    const result = await trace(site.url("/choices"));
    expect(result).toMatchObject({ chainStatus: "healthy", redirects: 0, finalStatus: 300 });
    expect(result.chain[0]).toMatchObject({ location: null, redirectType: null });
    expect(site.requests.map((request) => request.path)).not.toContain("/elsewhere");
  });
});

describe("loops", () => {
  it("stops a two-URL loop at the repeated URL", async () => {
    site.route("/ping", { kind: "redirect", status: 302, location: "/pong" });
    site.route("/pong", { kind: "redirect", status: 302, location: "/ping" });
    const result = await trace(site.url("/ping"));
    expect(result).toMatchObject({ chainStatus: "redirect_loop", redirects: 2, finalUrl: site.url("/ping"), finalStatus: null });
    expect(result.chain.map((hop) => hop.url)).toEqual([site.url("/ping"), site.url("/pong")]);
    expect(result.warnings.at(-1)).toEqual({
      code: "redirect_loop",
      message: `Hop 2 redirects back to ${site.url("/ping")}, already in the chain`,
      hop: 2,
      severity: "problem",
    });
  });

  it("stops a self-loop after one hop", async () => {
    site.route("/self", { kind: "redirect", status: 301, location: "/self" });
    const result = await trace(site.url("/self"));
    expect(result).toMatchObject({ chainStatus: "redirect_loop", redirects: 1, finalUrl: site.url("/self"), finalStatus: null });
    expect(result.chain).toHaveLength(1);
    expect(codes(result)).toEqual(["redirect_loop"]);
  });

  it("compares normalised URLs: scheme case, dot segments and fragments do not hide a loop", async () => {
    site.route("/a/b", { kind: "redirect", status: 301, location: `HTTP://127.0.0.1:${site.port}/a/./x/../b#section` });
    const result = await trace(site.url("/a/b"));
    expect(result).toMatchObject({ chainStatus: "redirect_loop", finalUrl: site.url("/a/b") });
    expect(result.chain).toHaveLength(1);
  });

  it("treats a different query as a different URL", async () => {
    site.route("/q?page=1", { kind: "redirect", status: 301, location: "/q?page=2" });
    site.route("/q?page=2", { kind: "status", status: 200 });
    const result = await trace(site.url("/q?page=1"));
    expect(result).toMatchObject({ chainStatus: "redirects_detected", redirects: 1 });
  });
});

describe("unusable redirects", () => {
  it("ends as Request failed when a redirect has no Location", async () => {
    site.route("/lost", { kind: "redirect", status: 302, location: null });
    const result = await trace(site.url("/lost"));
    expect(result).toMatchObject({ chainStatus: "request_failed", redirects: 1, finalUrl: site.url("/lost"), finalStatus: null });
    expect(result.chain[0]).toMatchObject({ status: 302, location: null, redirectType: "302 Found" });
    expect(result.warnings).toContainEqual({
      code: "missing_location",
      message: `302 Found from ${site.url("/lost")} has no Location header`,
      hop: 1,
      severity: "problem",
    });
  });

  it("ends as Request failed when the Location is not a URL", async () => {
    site.route("/garbled", { kind: "redirect", status: 301, location: "http://[not-an-ip/" });
    const result = await trace(site.url("/garbled"));
    expect(result).toMatchObject({ chainStatus: "request_failed", redirects: 1, finalUrl: site.url("/garbled"), finalStatus: null });
    expect(codes(result)).toEqual(["invalid_location"]);
  });

  it("does not follow a Location with another scheme", async () => {
    site.route("/ftp", { kind: "redirect", status: 301, location: "ftp://127.0.0.1/file" });
    const result = await trace(site.url("/ftp"));
    expect(result).toMatchObject({ chainStatus: "request_failed", redirects: 1, finalUrl: "ftp://127.0.0.1/file", finalStatus: null });
    expect(codes(result)).toEqual(["redirect_target_refused"]);
  });
});
