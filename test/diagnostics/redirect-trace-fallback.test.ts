import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticEnv } from "../../src/diagnostics/diagnostic-call.js";
import type { Prober } from "../../src/probe/hop-types.js";
import { startTraceTarget, type TraceTarget } from "../fixtures/trace-targets.js";
import { traceEnv, traceResult, loopbackProber } from "../fixtures/test-env.js";

let site: TraceTarget;
let prober: Prober;
let env: DiagnosticEnv;

beforeAll(async () => {
  site = await startTraceTarget();
  prober = loopbackProber();
  env = traceEnv(prober, { tracePorts: [site.port] });
});

afterAll(async () => {
  await prober.close();
  await site.close();
});

const trace = (input: string) => traceResult(input, env);

const methodsFor = (path: string) => site.requests.filter((request) => request.path === path).map((request) => request.method);

describe("HEAD first, GET when HEAD is refused", () => {
  it("uses HEAD alone when HEAD answers", async () => {
    site.route("/plain", { kind: "status", status: 200 });
    const result = await trace(site.url("/plain"));
    expect(result.chainStatus).toBe("healthy");
    expect(methodsFor("/plain")).toEqual(["HEAD"]);
  });

  it("retries a HEAD answered 405 with GET and reports what GET got", async () => {
    site.route("/no-head", { kind: "head-status", headStatus: 405, then: { kind: "redirect", status: 301, location: "/after-405" } });
    site.route("/after-405", { kind: "status", status: 200 });
    const result = await trace(site.url("/no-head"));
    expect(result).toMatchObject({ chainStatus: "redirects_detected", redirects: 1, finalUrl: site.url("/after-405"), finalStatus: 200 });
    expect(result.chain[0]).toMatchObject({ status: 301, location: site.url("/after-405") });
    expect(result.warnings).toEqual([
      {
        code: "head_refused_get_used",
        message: "HEAD answered 405 Method Not Allowed; the hop was retried with GET",
        hop: 1,
        severity: "info",
      },
    ]);
    expect(methodsFor("/no-head")).toEqual(["HEAD", "GET"]);
  });

  it("retries a HEAD whose connection is reset with GET", async () => {
    site.route("/reset-head", { kind: "head-reset", then: { kind: "status", status: 200 } });
    const result = await trace(site.url("/reset-head"));
    expect(result).toMatchObject({ chainStatus: "healthy", finalStatus: 200 });
    expect(result.chain[0]?.status).toBe(200);
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatchObject({ code: "head_refused_get_used", hop: 1 });
    expect(result.warnings[0]?.message).toMatch(/^HEAD failed: .+; the hop was retried with GET$/);
    expect(methodsFor("/reset-head")).toEqual(["HEAD", "GET"]);
  });

  it("keeps GET's error answer when GET is refused too", async () => {
    site.route("/always-403", { kind: "status", status: 403 });
    const result = await trace(site.url("/always-403"));
    expect(result).toMatchObject({ chainStatus: "healthy", finalStatus: 403 });
    expect(result.warnings.map((warning) => warning.code)).toEqual(["head_refused_get_used", "final_status_error"]);
  });

  it("does not retry a HEAD that timed out", async () => {
    site.route("/head-hangs", { kind: "silent" });
    const result = await trace(site.url("/head-hangs"));
    expect(result).toMatchObject({ chainStatus: "timeout", finalUrl: site.url("/head-hangs"), finalStatus: null, chain: [] });
    expect(result.warnings.map((warning) => warning.code)).toEqual(["hop_timeout"]);
    expect(methodsFor("/head-hangs")).toEqual(["HEAD"]);
  });

  it("reports the GET's failure, mentioning HEAD's answer, when the fallback fails too", async () => {
    site.route("/get-hangs", { kind: "head-status", headStatus: 501, then: { kind: "silent" } });
    const result = await trace(site.url("/get-hangs"));
    expect(result).toMatchObject({ chainStatus: "timeout", finalUrl: site.url("/get-hangs"), chain: [] });
    expect(result.warnings).toEqual([
      {
        code: "hop_timeout",
        message: `GET ${site.url("/get-hangs")} got no response within 400 ms (after HEAD answered 501 Not Implemented)`,
        hop: null,
        severity: "problem",
      },
    ]);
  });
});
