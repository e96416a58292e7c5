import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { siteCheckRevocationWarning } from "../../src/diagnostics/revocation-warnings.js";
import { getOcspFixture, type OcspFixture, startStaplingTarget, type StaplingTarget } from "../fixtures/ocsp-staples.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { checkedResult, createTestEnv, type TestEnv, traceEnv, traceResult } from "../fixtures/test-env.js";

// Revocation as the server shows it, through both diagnostics: details' tls.ocsp, and redirect-check's certificate_revoked.
let fixture: OcspFixture;
let env: TestEnv;
const started: StaplingTarget[] = [];

beforeAll(async () => {
  const pki = await getTestPki();
  fixture = await getOcspFixture();
  env = createTestEnv({ ca: pki.caPem });
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((target) => target.close()));
});
afterAll(async () => {
  await env.close();
});

async function target(pick: (f: OcspFixture) => [OcspFixture["good"], Buffer | null]): Promise<StaplingTarget> {
  const [pair, staple] = pick(fixture);
  const started1 = await startStaplingTarget(pair, staple);
  started.push(started1);
  return started1;
}

function traceEnvFor(url: string) {
  return traceEnv(env.prober, { tracePorts: [Number(new URL(url).port)], traceHopTimeoutMs: 5_000, traceTotalTimeoutMs: 10_000 });
}

describe("redirect-check: certificate_revoked", () => {
  it("a revoked staple for the hop's own certificate is a problem, with or without details; the reused hop after it is not warned again", async () => {
    const site = await target((f) => [f.revoked, f.answers.revoked]);
    const url = `${site.url}redirect`;
    const plain = await traceResult(url, traceEnvFor(url));
    expect(plain.chainStatus).toBe("redirects_detected");
    const revoked = plain.warnings.filter((warning) => warning.code === "certificate_revoked");
    expect(revoked).toEqual([
      {
        code: "certificate_revoked",
        hop: 1,
        severity: "problem",
        message: `The certificate of ${url} is revoked since ${fixture.revokedAt} (keyCompromise): the OCSP answer its server staples says so`,
      },
    ]);
    const detailed = await traceResult(url, traceEnvFor(url), { details: true });
    expect(detailed.warnings.filter((warning) => warning.code === "certificate_revoked")).toHaveLength(1);
    // The two hops and the extra GET of the final page (details), all over the one connection that stapled.
    expect(detailed.details?.requests.map((request) => request.tls?.ocsp.status)).toEqual(["revoked", "revoked", "revoked"]);
    expect(detailed.details?.requests[0]?.tls?.ocsp).toMatchObject({
      forLeaf: true,
      signature: "verified",
      revokedAt: fixture.revokedAt,
      revocationReason: "keyCompromise",
    });
  });

  it("no warning for a good staple, for none, or for a revoked answer about another certificate", async () => {
    for (const pick of [
      (f: OcspFixture) => [f.good, f.answers.good],
      (f: OcspFixture) => [f.good, null],
      (f: OcspFixture) => [f.good, f.answers.revoked],
    ] as const) {
      const site = await target((f) => pick(f) as [OcspFixture["good"], Buffer | null]);
      const result = await traceResult(site.url, traceEnvFor(site.url), { details: true });
      expect(result.chainStatus).toBe("healthy");
      expect(result.warnings.map((warning) => warning.code)).not.toContain("certificate_revoked");
    }
  });
});

describe("is-site-down: details and their warnings", () => {
  it("details' request carries the staple; the warning is for a revoked one only", async () => {
    const revokedSite = await target((f) => [f.revoked, f.answers.revoked]);
    const result = await checkedResult(revokedSite.url, env, { details: true });
    expect(result.status).toBe("up");
    const tls = result.details?.requests[0]?.tls ?? null;
    expect(tls?.ocsp).toMatchObject({ status: "revoked", forLeaf: true, signature: "verified", stale: false });
    expect(siteCheckRevocationWarning(revokedSite.url, tls)).toEqual({
      code: "certificate_revoked",
      severity: "problem",
      message: `The certificate of ${revokedSite.url} is revoked since ${fixture.revokedAt} (keyCompromise): the OCSP answer its server staples says so`,
    });
    // details.warnings (is-site-down has no warnings list of its own) carries it, naming the request.
    expect(result.details?.warnings.filter((warning) => warning.code === "certificate_revoked")).toEqual([
      { code: "certificate_revoked", severity: "problem", hop: 1, message: expect.stringContaining("is revoked since") as string },
    ]);

    const goodSite = await target((f) => [f.good, f.answers.good]);
    const good = await checkedResult(goodSite.url, env, { details: true });
    expect(good.details?.requests[0]?.tls?.ocsp).toMatchObject({ status: "good", forLeaf: true });
    expect(siteCheckRevocationWarning(goodSite.url, good.details?.requests[0]?.tls ?? null)).toBeNull();
    expect(good.details?.warnings.map((warning) => warning.code)).not.toContain("certificate_revoked");
    expect(siteCheckRevocationWarning(goodSite.url, null)).toBeNull();
  });

  it("a revoked answer whose signature fails is no warning, in either diagnostic", async () => {
    const site = await target((f) => [f.revoked, f.answers.revokedForged]);
    const tls = (await checkedResult(site.url, env, { details: true })).details?.requests[0]?.tls ?? null;
    expect(tls?.ocsp).toMatchObject({ status: "revoked", forLeaf: true, signature: "failed" });
    expect(siteCheckRevocationWarning(site.url, tls)).toBeNull();
    const traced = await traceResult(site.url, traceEnvFor(site.url));
    expect(traced.warnings.map((warning) => warning.code)).not.toContain("certificate_revoked");
  });
});
