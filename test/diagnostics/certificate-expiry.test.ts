import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { certificateWarnings, expiringCertificates } from "../../src/diagnostics/certificate-expiry.js";
import type { ChainCertificate, Prober } from "../../src/probe/hop-types.js";
import { type ChainKeyPair, type ChainPki, getChainPki } from "../fixtures/chain-certificates.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { checkedResult, loopbackProber, traceEnv, traceResult } from "../fixtures/test-env.js";

/**
 * certificate_expires_soon: redirect-check's warning (leaf always, the whole
 * chain with details) and the total function is-site-down's details read,
 * against TLS listeners serving leaves that expire in 5 and 30 days.
 */
let pki: ChainPki;
let prober: Prober;
const targets: HttpTargets[] = [];

beforeAll(async () => {
  pki = await getChainPki();
  prober = loopbackProber({ ca: pki.rootPem });
}, 60_000);
afterAll(async () => {
  await prober.close();
  await Promise.all(targets.map((target) => target.close()));
});

/** An HTTPS target whose /old redirects to /new on the same origin, both 200-ending. */
async function serving(pair: ChainKeyPair): Promise<HttpTargets> {
  const target = await startHttpTargets({ tls: pair, routes: { "/new": { kind: "respond", status: 200 } } });
  target.route("/old", () => ({ kind: "redirect", status: 301, location: target.url("/new", { secure: true }) }));
  targets.push(target);
  return target;
}

function envFor(target: HttpTargets, certExpiryWarnDays?: number) {
  return {
    ...traceEnv(prober, { tracePorts: [target.httpsPort ?? 0], traceHopTimeoutMs: 5_000, traceTotalTimeoutMs: 10_000 }),
    ...(certExpiryWarnDays === undefined ? {} : { certExpiryWarnDays }),
  };
}

describe("certificate_expires_soon in redirect-check", () => {
  it("warns of a leaf with 5 days left, once for the chain's one certificate, at the first hop that saw it", async () => {
    const target = await serving(pki.expiresIn5Days);
    const result = await traceResult(target.url("/old", { secure: true }), envFor(target));
    const expiring = result.warnings.filter((warning) => warning.code === "certificate_expires_soon");
    expect(expiring).toEqual([
      {
        code: "certificate_expires_soon",
        severity: "warning",
        hop: 1,
        message: expect.stringMatching(
          /^The certificate "localhost" of https:\/\/127\.0\.0\.1:\d+\/old expires in 5 days, on \d{4}-\d\d-\d\d$/,
        ) as string,
      },
    ]);
  });

  it("says nothing of a leaf with 30 days left, unless the threshold (SITEDIAG_CERT_EXPIRY_WARN_DAYS) is above 30", async () => {
    const target = await serving(pki.expiresIn30Days);
    const url = target.url("/old", { secure: true });
    expect((await traceResult(url, envFor(target))).warnings.map((warning) => warning.code)).not.toContain("certificate_expires_soon");
    const wider = await traceResult(url, envFor(target, 40));
    expect(wider.warnings.filter((warning) => warning.code === "certificate_expires_soon").map((warning) => warning.message)).toEqual([
      expect.stringContaining("expires in 30 days") as string,
    ]);
    expect((await traceResult(url, envFor(target, 0))).warnings.map((warning) => warning.code)).not.toContain("certificate_expires_soon");
  });

  it("names an intermediate close to its end when details describe the chain; without details only the leaf is read", async () => {
    const target = await serving(pki.intermediateExpiresIn6Days);
    const url = target.url("/old", { secure: true });
    expect((await traceResult(url, envFor(target))).warnings.map((warning) => warning.code)).not.toContain("certificate_expires_soon");
    const detailed = await traceResult(url, envFor(target), { details: true });
    expect(detailed.warnings.filter((warning) => warning.code === "certificate_expires_soon").map((warning) => warning.message)).toEqual([
      expect.stringMatching(
        /^Chain certificate 1 \(above the leaf\) "short-lived chain intermediate" of https:\/\/127\.0\.0\.1:\d+\/old expires in 6 days/,
      ) as string,
    ]);
  });
});

describe("certificateWarnings (is-site-down's details)", () => {
  it("reads the requests of a check's details: a leaf with 5 days left warns, with the request's index; 30 days does not", async () => {
    const soon = await serving(pki.expiresIn5Days);
    const later = await serving(pki.expiresIn30Days);
    const soonResult = await checkedResult(soon.url("/new", { secure: true }), envFor(soon), { details: true });
    expect(certificateWarnings(soonResult.details?.requests ?? [], 14)).toEqual([
      { code: "certificate_expires_soon", request: 0, message: expect.stringContaining("expires in 5 days") as string },
    ]);
    const laterResult = await checkedResult(later.url("/new", { secure: true }), envFor(later), { details: true });
    expect(laterResult.details?.requests).toHaveLength(1);
    expect(certificateWarnings(laterResult.details?.requests ?? [], 14)).toEqual([]);
  });

  it("is in is-site-down's details.warnings, with its severity and the request it concerns; the threshold from the env", async () => {
    const soon = await serving(pki.expiresIn5Days);
    const url = soon.url("/new", { secure: true });
    const result = await checkedResult(url, envFor(soon), { details: true });
    expect(result.details?.warnings).toEqual([
      { code: "certificate_expires_soon", severity: "warning", hop: 1, message: expect.stringContaining("expires in 5 days") as string },
    ]);
    expect((await checkedResult(url, envFor(soon, 0), { details: true })).details?.warnings).toEqual([]);
  });

  it("reads an unreadable or past date as no warning, and the threshold in whole days", () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    const certificate = (validTo: string): ChainCertificate => ({
      subject: "x",
      subjectName: "CN=x",
      issuerName: "CN=y",
      subjectAltNames: [],
      subjectAltNamesMore: 0,
      validFrom: "",
      validTo,
      keyType: "",
      keySize: 0,
      keyCurve: "",
      signatureAlgorithm: "",
      fingerprintSha256: validTo,
      selfIssued: false,
    });
    const chain = ["", "Bad time value", "2029-12-31T00:00:00Z", "2030-01-14T23:59:59Z", "2030-01-15T00:00:00Z"].map(certificate);
    expect(expiringCertificates({ certificate: null, chain }, 14, now)).toEqual([
      { position: 3, subject: "x", validTo: "2030-01-14T23:59:59Z", daysRemaining: 13, fingerprintSha256: "2030-01-14T23:59:59Z" },
    ]);
    expect(expiringCertificates(null, 14, now)).toEqual([]);
  });
});

describe("SITEDIAG_CERT_EXPIRY_WARN_DAYS", () => {
  it("is 14 unless set, a whole number of days from 0 (never warn) to 3650", () => {
    expect(loadConfig({}).certExpiryWarnDays).toBe(14);
    expect(loadConfig({ SITEDIAG_CERT_EXPIRY_WARN_DAYS: "30" }).certExpiryWarnDays).toBe(30);
    expect(loadConfig({ SITEDIAG_CERT_EXPIRY_WARN_DAYS: "0" }).certExpiryWarnDays).toBe(0);
    expect(() => loadConfig({ SITEDIAG_CERT_EXPIRY_WARN_DAYS: "two weeks" })).toThrow(ConfigError);
    expect(() => loadConfig({ SITEDIAG_CERT_EXPIRY_WARN_DAYS: "5000" })).toThrow(ConfigError);
  });
});
