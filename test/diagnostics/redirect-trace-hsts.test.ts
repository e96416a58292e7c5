import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticEnv } from "../../src/diagnostics/diagnostic-call.js";
import type { Prober } from "../../src/probe/hop-types.js";
import { type HttpTargets, startHttpTargets, type TargetRoute } from "../fixtures/http-targets.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { loopbackProber, traceEnv, traceResult } from "../fixtures/test-env.js";

let targets: HttpTargets;
let prober: Prober;
let env: DiagnosticEnv;

beforeAll(async () => {
  const pki = await getTestPki();
  targets = await startHttpTargets({ tls: pki.valid });
  prober = loopbackProber({ ca: pki.caPem });
  env = traceEnv(prober, { tracePorts: [targets.httpPort, targets.httpsPort ?? 0], traceHopTimeoutMs: 1_000, traceTotalTimeoutMs: 5_000 });
});

afterAll(async () => {
  await prober.close();
  await targets.close();
});

const YEAR = "max-age=31536000; includeSubDomains";

/** http://…/name redirects to https://…/name, which answers 200 with `sts` (none when undefined). */
function upgrade(name: string, sts?: string | readonly string[]): string {
  const headers: Record<string, string | readonly string[]> = sts === undefined ? {} : { "strict-transport-security": sts };
  targets.route(
    `/${name}`,
    (request): TargetRoute =>
      request.secure
        ? { kind: "respond", status: 200, headers }
        : { kind: "redirect", status: 301, location: targets.url(`/${name}`, { secure: true }) },
  );
  return targets.url(`/${name}`);
}

const hstsCodes = (warnings: readonly { readonly code: string }[]) =>
  warnings.map((warning) => warning.code).filter((code) => code.startsWith("hsts_"));

describe("HSTS warnings of redirect-check (no details needed)", () => {
  it("http -> https without Strict-Transport-Security: hsts_missing on the final hop, a warning", async () => {
    const result = await traceResult(upgrade("none"), env);
    expect(result.chainStatus).toBe("redirects_detected");
    expect(result.warnings).toContainEqual({
      code: "hsts_missing",
      hop: 2,
      severity: "warning",
      message: expect.stringContaining("sends no Strict-Transport-Security") as string,
    });
    expect(hstsCodes(result.warnings)).toEqual(["hsts_missing"]);
  });

  it("an invalid policy, or max-age=0, is no policy: hsts_missing", async () => {
    expect(hstsCodes((await traceResult(upgrade("invalid", "max-age=-5"), env)).warnings)).toEqual(["hsts_missing"]);
    expect(hstsCodes((await traceResult(upgrade("twice", "max-age=5; max-age=6"), env)).warnings)).toEqual(["hsts_missing"]);
    expect(hstsCodes((await traceResult(upgrade("zero", "max-age=0"), env)).warnings)).toEqual(["hsts_missing"]);
  });

  it("a max-age under 180 days: hsts_short, info", async () => {
    const result = await traceResult(upgrade("short", "max-age=86400"), env);
    expect(result.warnings.filter((warning) => warning.code.startsWith("hsts_"))).toEqual([
      { code: "hsts_short", hop: 2, severity: "info", message: expect.stringContaining("max-age=86400 (1 days)") as string },
    ]);
  });

  it("a year's policy: neither", async () => {
    const result = await traceResult(upgrade("good", YEAR), env);
    expect(result.warnings).toEqual([]);
  });

  it("several fields: the first counts (RFC 6797 §8.1)", async () => {
    expect(hstsCodes((await traceResult(upgrade("first-good", [YEAR, "max-age=1"]), env)).warnings)).toEqual([]);
    expect(hstsCodes((await traceResult(upgrade("first-short", ["max-age=1", YEAR]), env)).warnings)).toEqual(["hsts_short"]);
  });

  it("a chain that starts on https without HSTS gets no hsts_missing; an http-only chain gets nothing", async () => {
    targets.route("/https-only", { kind: "respond", status: 200 });
    expect(hstsCodes((await traceResult(targets.url("/https-only", { secure: true }), env)).warnings)).toEqual([]);
    expect(hstsCodes((await traceResult(targets.url("/https-only"), env)).warnings)).toEqual([]);
  });

  it("a short policy on a chain that starts on https: hsts_short all the same", async () => {
    targets.route("/https-short", { kind: "respond", status: 200, headers: { "strict-transport-security": "max-age=600" } });
    expect(hstsCodes((await traceResult(targets.url("/https-short", { secure: true }), env)).warnings)).toEqual(["hsts_short"]);
  });
});

describe("details: transportSecurity per request", () => {
  it("null on the http:// hop, the policy and h3 on the HTTPS answers", async () => {
    targets.route(
      "/h3",
      (request): TargetRoute =>
        request.secure
          ? {
              kind: "respond",
              status: 200,
              headers: { "strict-transport-security": `${YEAR}; preload`, "alt-svc": 'h3=":443"; ma=86400, h2=":443"' },
            }
          : { kind: "redirect", status: 301, location: targets.url("/h3", { secure: true }) },
    );
    const result = await traceResult(targets.url("/h3"), env, { details: true });
    const requests = result.details?.requests ?? [];
    expect(requests.map((request) => [request.url.slice(0, 5), request.transportSecurity])).toEqual([
      ["http:", null],
      ["https", { hsts: { maxAge: 31_536_000, includeSubDomains: true, preload: true }, hstsInvalid: false, h3Advertised: true }],
      ["https", { hsts: { maxAge: 31_536_000, includeSubDomains: true, preload: true }, hstsInvalid: false, h3Advertised: true }],
    ]);
  });

  it("an invalid field is reported as such", async () => {
    const result = await traceResult(upgrade("invalid-details", "max-age=1 junk"), env, { details: true });
    expect(result.details?.requests[1]?.transportSecurity).toEqual({ hsts: null, hstsInvalid: true, h3Advertised: false });
  });
});
