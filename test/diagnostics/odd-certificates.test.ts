import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticDetails } from "../../src/diagnostics/diagnostic-details.js";
import { CERTIFICATE_TEXT } from "../../src/shared/limits.js";
import { CHAIN_LIMITS } from "../../src/probe/connect/chain-certificate.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type OddCertificate, oddCertificates } from "../fixtures/odd-certificates.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { type TestEnv, checkedResult, createTestEnv, checkSite, probeThreadsOf, traceRedirects } from "../fixtures/test-env.js";

/**
 * A site's certificate is its own writing. Whatever its fields say, a check
 * of it answers with a verdict, the certificate it saw is in the details
 * within CERTIFICATE_TEXT, and nothing else dies: in the threaded project
 * the probe thread that read it is the same one afterwards (a throw in the
 * connector's secureConnect listener used to end it, or the process).
 */
const SEED = 28;
const ROUTES = { "/": { kind: "respond", status: 200 } } as const;

let env: TestEnv;
let healthy: HttpTargets;
let cases: readonly { readonly odd: OddCertificate; readonly target: HttpTargets }[];
let threadsBefore: readonly number[];

beforeAll(async () => {
  const pki = await getTestPki();
  const odd = await oddCertificates(SEED);
  cases = await Promise.all(
    odd.map(async (each) => ({ odd: each, target: await startHttpTargets({ tls: { key: each.key, cert: each.cert }, routes: ROUTES }) })),
  );
  healthy = await startHttpTargets({ tls: pki.valid, routes: ROUTES });
  // The trace's budget is the contract's: a huge chain takes a while to verify on a busy machine.
  const tracePorts = [healthy, ...cases.map(({ target }) => target)].map(({ httpsPort }) => httpsPort ?? 0);
  env = createTestEnv({ ca: pki.caPem, siteTimeoutMs: 5_000, tracePorts, traceHopTimeoutMs: 5_000, traceTotalTimeoutMs: 20_000 });
}, 120_000);

afterAll(async () => {
  await env.close();
  await healthy.close();
  await Promise.all(cases.map(({ target }) => target.close()));
});

function threadIds(): readonly number[] {
  return (
    probeThreadsOf(env.prober)
      ?.workers()
      .map((worker) => worker.threadId) ?? []
  );
}

/** What an answer may copy of a certificate: a bounded, printable value in every field. */
function expectBoundedCertificates(details: DiagnosticDetails | undefined): void {
  expect(details).toBeDefined();
  for (const request of details?.requests ?? []) {
    const certificate = request.tls?.certificate;
    if (certificate === null || certificate === undefined) continue;
    expect(certificate.subjectAltNames.length).toBeLessThanOrEqual(CERTIFICATE_TEXT.maxAltNames);
    for (const text of [certificate.subject, certificate.issuer, certificate.serialNumber, ...certificate.subjectAltNames]) {
      expect(text.length).toBeLessThanOrEqual(CERTIFICATE_TEXT.maxChars);
      // eslint-disable-next-line no-control-regex
      expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
    }
    for (const date of [certificate.validFrom, certificate.validTo]) expect(date === "" || !Number.isNaN(Date.parse(date))).toBe(true);
    expect(Number.isInteger(certificate.daysRemaining)).toBe(true);
    // The whole chain (details): as bounded and as printable, each of its first CHAIN_LIMITS.maxCertificates.
    const chain = request.tls?.chain ?? [];
    expect(chain.length).toBeGreaterThan(0);
    expect(chain.length).toBeLessThanOrEqual(CHAIN_LIMITS.maxCertificates);
    for (const link of chain) {
      expect(link.subjectAltNames.length).toBeLessThanOrEqual(CHAIN_LIMITS.maxAltNames);
      expect(link.subjectAltNamesMore).toBeGreaterThanOrEqual(0);
      for (const text of [
        link.subject,
        link.subjectName,
        link.issuerName,
        link.keyType,
        link.keyCurve,
        link.signatureAlgorithm,
        ...link.subjectAltNames,
      ]) {
        expect(text.length).toBeLessThanOrEqual(CERTIFICATE_TEXT.maxChars);
        // eslint-disable-next-line no-control-regex
        expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
      }
      expect(Number.isInteger(link.daysRemaining)).toBe(true);
    }
    expect(request.tls?.verification?.more).toBeGreaterThanOrEqual(0);
  }
}

describe("odd certificates, one of each kind", () => {
  beforeAll(() => {
    threadsBefore = threadIds();
  });

  it("covers every kind the fixture makes", () => {
    expect(cases.map(({ odd }) => odd.kind)).toEqual([
      "bad-date",
      "extreme-dates",
      "undecodable-san",
      "huge-san",
      "no-san",
      "empty-names",
      "control-bytes",
      "huge-strings",
      "long-chain",
    ]);
  });

  it.each([0, 1, 2, 3, 4, 5, 6, 7, 8])("case %i: the site check answers with a verdict and a bounded certificate", async (index) => {
    const { odd, target } = cases[index] as (typeof cases)[number];
    const outcome = await checkSite(target.url("/", { secure: true }), env, undefined, { details: true });
    expect(outcome.kind, odd.name).toBe("result");
    if (outcome.kind !== "result") return;
    const { result } = outcome;
    expect(["up", "down"], odd.name).toContain(result.status);
    if (result.status === "down") expect(result.details?.code, odd.name).toMatch(/^tls_/);
    expectBoundedCertificates(result.details);
    // The certificate the handshake saw is reported, whatever the verdict.
    expect(result.details?.requests[0]?.tls?.certificate, odd.name).not.toBeNull();
  });

  it.each([0, 1, 2, 3, 4, 5, 6, 7, 8])("case %i: the redirect trace answers with a result and a bounded certificate", async (index) => {
    const { odd, target } = cases[index] as (typeof cases)[number];
    const outcome = await traceRedirects(target.url("/", { secure: true }), env, undefined, { details: true });
    expect(outcome.kind, odd.name).toBe("result");
    if (outcome.kind === "result") expectBoundedCertificates(outcome.result.details);
  });

  it("a healthy site checked afterwards is up, on the same probe threads", async () => {
    expect(await checkedResult(healthy.url("/", { secure: true }), env)).toMatchObject({ status: "up", statusCode: 200 });
    expect(threadIds()).toEqual(threadsBefore);
  });
});

describe("the fields of the issue's rows, exactly", () => {
  const detailsOf = async (kind: OddCertificate["kind"]) => {
    const found = cases.find(({ odd }) => odd.kind === kind);
    if (found === undefined) throw new Error(`no ${kind} case`);
    const outcome = await checkSite(found.target.url("/", { secure: true }), env, undefined, { details: true });
    if (outcome.kind !== "result") throw new Error(`expected a result, got ${outcome.kind}`);
    return { result: outcome.result, certificate: outcome.result.details?.requests[0]?.tls?.certificate };
  };

  it("a validity date Node reads as 'Bad time value' is reported empty, with 0 days remaining, and the site is down at tls", async () => {
    const { result, certificate } = await detailsOf("bad-date");
    expect(result).toMatchObject({ status: "down", failedStage: "tls" });
    expect([certificate?.validFrom, certificate?.validTo]).toContain("");
    if (certificate?.validTo === "") expect(certificate.daysRemaining).toBe(0);
  });

  it("a subjectAltName that does not decode is an empty list", async () => {
    const { certificate } = await detailsOf("undecodable-san");
    expect(certificate?.subjectAltNames).toEqual([]);
    expect(certificate?.subject).toBe("localhost");
  });

  it("an empty subject is an empty string", async () => {
    const { certificate } = await detailsOf("empty-names");
    expect(certificate?.subject).toBe("");
  });

  it("thousands of subjectAltNames are cut to the limit, in the certificate's order", async () => {
    const { certificate } = await detailsOf("huge-san");
    expect(certificate?.subjectAltNames).toHaveLength(CERTIFICATE_TEXT.maxAltNames);
    expect(certificate?.subjectAltNames[0]).toMatch(/^DNS:n0\./);
  });

  it("in the chain, thousands of subjectAltNames are the first 20 and a count of the rest", async () => {
    const { result } = await detailsOf("huge-san");
    const leaf = result.details?.requests[0]?.tls?.chain[0];
    expect(leaf?.subjectAltNames).toHaveLength(CHAIN_LIMITS.maxAltNames);
    expect(leaf?.subjectAltNames[0]).toMatch(/^DNS:n0\./);
    expect(leaf?.subjectAltNamesMore).toBeGreaterThan(1_000);
  });

  it("a name with control bytes and bidi overrides reaches the chain escaped", async () => {
    const { result } = await detailsOf("control-bytes");
    const leaf = result.details?.requests[0]?.tls?.chain[0];
    expect(leaf?.subjectName).toContain("\ufffd");
    // The signature algorithm is still read: the odd names do not stop the DER parse.
    expect(leaf?.signatureAlgorithm).toBe("ecdsa-with-SHA256");
  });

  it("a long chain lists its first 10 certificates and counts the rest", async () => {
    const { result } = await detailsOf("long-chain");
    const tls = result.details?.requests[0]?.tls;
    expect(tls?.chain).toHaveLength(CHAIN_LIMITS.maxCertificates);
    expect(tls?.verification?.more).toBeGreaterThan(0);
    expect((tls?.chain.length ?? 0) + (tls?.verification?.more ?? 0)).toBeLessThanOrEqual(64);
  });

  it("a long chain is counted as far as the walk goes", async () => {
    const { certificate } = await detailsOf("long-chain");
    expect(certificate?.chainLength).toBeGreaterThan(10);
    expect(certificate?.chainLength).toBeLessThanOrEqual(64);
  });
});
