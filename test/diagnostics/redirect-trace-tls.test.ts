import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticEnv } from "../../src/diagnostics/diagnostic-call.js";
import type { Prober } from "../../src/probe/hop-types.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { startTraceTarget, type TraceTarget } from "../fixtures/trace-targets.js";
import { traceEnv, traceResult, loopbackProber } from "../fixtures/test-env.js";

let plain: TraceTarget;
let secure: TraceTarget;
let expired: TraceTarget;
let selfSigned: TraceTarget;
let prober: Prober;
let env: DiagnosticEnv;

beforeAll(async () => {
  const pki = await getTestPki();
  plain = await startTraceTarget();
  secure = await startTraceTarget({ tls: pki.valid });
  expired = await startTraceTarget({ tls: pki.expired });
  selfSigned = await startTraceTarget({ tls: pki.selfSigned });
  prober = loopbackProber({ ca: pki.caPem });
  env = traceEnv(prober, { tracePorts: [plain.port, secure.port, expired.port, selfSigned.port] });
});

afterAll(async () => {
  await prober.close();
  await Promise.all([plain.close(), secure.close(), expired.close(), selfSigned.close()]);
});

const trace = (input: string) => traceResult(input, env);

describe("http and https", () => {
  it("marks an http hop redirecting to https as upgradedToHttps", async () => {
    plain.route("/insecure", { kind: "redirect", status: 301, location: secure.url("/secure") });
    secure.route("/secure", { kind: "status", status: 200 });
    const result = await trace(plain.url("/insecure"));
    expect(result).toMatchObject({ chainStatus: "redirects_detected", redirects: 1, finalUrl: secure.url("/secure"), finalStatus: 200 });
    // The HTTPS page sets no Strict-Transport-Security: the next http:// visit is as open as this one (issue 32).
    expect(result.warnings.map((warning) => warning.code)).toEqual(["hsts_missing"]);
    expect(result.chain.map((hop) => [hop.url, hop.upgradedToHttps])).toEqual([
      [plain.url("/insecure"), true],
      [secure.url("/secure"), false],
    ]);
  });

  it("warns about an https hop redirecting to http", async () => {
    secure.route("/downgrade", { kind: "redirect", status: 301, location: plain.url("/plain") });
    plain.route("/plain", { kind: "status", status: 200 });
    const result = await trace(secure.url("/downgrade"));
    expect(result).toMatchObject({ chainStatus: "redirects_detected", redirects: 1, finalUrl: plain.url("/plain") });
    expect(result.chain[0]?.upgradedToHttps).toBe(false);
    expect(result.warnings).toEqual([
      { code: "https_downgrade", message: `Hop 1 redirects from HTTPS to plain HTTP: ${plain.url("/plain")}`, hop: 1, severity: "problem" },
    ]);
  });

  it("starts a bare host at https and reaches the TLS server", async () => {
    secure.route("/bare?x=1", { kind: "status", status: 200 });
    const result = await trace(`127.0.0.1:${secure.port}/bare?x=1`);
    expect(result).toMatchObject({ chainStatus: "healthy", finalUrl: secure.url("/bare?x=1"), finalStatus: 200 });
  });

  it.each([
    ["an expired certificate", () => expired],
    ["a certificate from an unknown issuer", () => selfSigned],
  ])("answers Request failed with an empty chain for %s on the first hop", async (_name, target) => {
    const url = target().url("/");
    const result = await trace(url);
    expect(result).toMatchObject({ chainStatus: "request_failed", redirects: 0, chain: [], finalUrl: url, finalStatus: null });
    expect(result.warnings.map((warning) => warning.code)).toEqual(["tls_failed"]);
    expect(target().requests).toEqual([]);
  });

  it("keeps the partial chain when a later hop fails TLS", async () => {
    plain.route("/to-expired", { kind: "redirect", status: 301, location: expired.url("/page") });
    const result = await trace(plain.url("/to-expired"));
    expect(result).toMatchObject({ chainStatus: "request_failed", redirects: 1, finalUrl: expired.url("/page"), finalStatus: null });
    expect(result.chain).toHaveLength(1);
    expect(result.chain[0]?.upgradedToHttps).toBe(true);
    expect(result.warnings.at(-1)?.code).toBe("tls_failed");
  });
});
