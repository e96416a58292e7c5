import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HopOutcome, Prober, TlsDetail } from "../../../src/probe/hop-types.js";
import { type ChainKeyPair, type ChainPki, getChainPki } from "../../fixtures/chain-certificates.js";
import { type HttpTargets, startHttpTargets } from "../../fixtures/http-targets.js";
import { loopbackProber } from "../../fixtures/test-env.js";

/**
 * The whole chain a handshake saw, each certificate described and the link
 * that failed named, against real TLS listeners serving chains made with
 * openssl (chain-certificates.ts).
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

async function tlsOf(pair: ChainKeyPair, wholeChain = true): Promise<TlsDetail> {
  const target = await startHttpTargets({ tls: pair, routes: { "/": { kind: "respond", status: 200 } } });
  targets.push(target);
  const url = new URL(target.url("/", { secure: true }));
  const outcome: HopOutcome = await prober.hop({
    url,
    method: "GET",
    timeoutMs: 10_000,
    ports: { kind: "fetch-safe" },
    captureHead: wholeChain,
  });
  const tls = outcome.kind === "response" ? outcome.response.tls : outcome.kind === "failure" ? outcome.trace.tls : null;
  if (tls === null || tls === undefined) throw new Error(`no TLS detail: ${JSON.stringify(outcome).slice(0, 300)}`);
  return tls;
}

describe("the chain a handshake saw", () => {
  it("describes each certificate of a complete chain, leaf first, the trusted root last: keys, signature algorithms, SANs, dates, fingerprints", async () => {
    const tls = await tlsOf(pki.complete);
    expect(tls.verifyError).toBeNull();
    expect(tls.verification).toEqual({ verified: true, failedAt: null, reason: null, more: 0 });
    expect(tls.chain.map((certificate) => certificate.subject)).toEqual([
      "localhost",
      "sitediag chain intermediate",
      "sitediag chain root",
    ]);
    const [leaf, intermediate, root] = tls.chain;
    // The leaf's key is ECDSA, signed by the RSA intermediate; the intermediate's RSA key is signed by the EC root.
    expect(leaf).toMatchObject({
      keyType: "ec",
      keyCurve: "prime256v1",
      keySize: 256,
      signatureAlgorithm: "sha256WithRSAEncryption",
      selfIssued: false,
    });
    expect(leaf?.subjectAltNames).toEqual(["DNS:localhost", "IP Address:127.0.0.1", "IP Address:0:0:0:0:0:0:0:1"]);
    expect(leaf?.subjectAltNamesMore).toBe(0);
    expect(leaf?.issuerName).toBe("CN=sitediag chain intermediate, O=sitediag chain tests");
    expect(intermediate).toMatchObject({
      keyType: "rsa",
      keySize: 2048,
      keyCurve: "",
      signatureAlgorithm: "ecdsa-with-SHA256",
      subjectAltNames: [],
    });
    expect(root).toMatchObject({ keyType: "ec", selfIssued: true, signatureAlgorithm: "ecdsa-with-SHA256" });
    for (const certificate of tls.chain) {
      expect(certificate.fingerprintSha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
      expect(Date.parse(certificate.validTo)).toBeGreaterThan(Date.now());
      expect(Date.parse(certificate.validFrom)).toBeLessThan(Date.now());
    }
    // The leaf record and the chain's first certificate are the same certificate.
    expect(leaf?.fingerprintSha256).toBe(tls.certificate?.fingerprintSha256);
  });

  it("is not described without details: the leaf only, no chain, no verification", async () => {
    const tls = await tlsOf(pki.complete, false);
    expect(tls.certificate?.subject).toBe("localhost");
    expect(tls.chain).toEqual([]);
    expect(tls.verification).toBeNull();
  });

  it("names a missing intermediate at the top certificate sent: the leaf sent alone", async () => {
    const tls = await tlsOf(pki.leafAlone);
    expect(tls.verifyError).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
    expect(tls.verification).toEqual({ verified: false, failedAt: 0, reason: "missing intermediate", more: 0 });
    expect(tls.chain.map((certificate) => certificate.subject)).toEqual(["localhost"]);
  });

  it("names an expired intermediate, at its link", async () => {
    const tls = await tlsOf(pki.expiredIntermediate);
    expect(tls.verifyError).toBe("CERT_HAS_EXPIRED");
    expect(tls.verification).toEqual({ verified: false, failedAt: 1, reason: "expired", more: 0 });
    expect(tls.chain[1]?.subject).toBe("expired chain intermediate");
    expect(tls.chain[1]?.validTo).toBe("2021-01-01T00:00:00.000Z");
  });

  it("names a leaf that is not yet valid", async () => {
    const tls = await tlsOf(pki.notYetValid);
    expect(tls.verifyError).toBe("CERT_NOT_YET_VALID");
    expect(tls.verification).toEqual({ verified: false, failedAt: 0, reason: "not yet valid", more: 0 });
  });

  it("names an untrusted self-signed root the server sent, at the root", async () => {
    const tls = await tlsOf(pki.untrustedRootSent);
    expect(tls.verifyError).toBe("SELF_SIGNED_CERT_IN_CHAIN");
    expect(tls.verification).toEqual({ verified: false, failedAt: 1, reason: "self-signed root sent", more: 0 });
    expect(tls.chain.map((certificate) => certificate.subject)).toEqual(["localhost", "untrusted chain root"]);
  });

  it("names a leaf for another name: name mismatch at the leaf", async () => {
    const tls = await tlsOf(pki.wrongName);
    expect(tls.verifyError).toBe("ERR_TLS_CERT_ALTNAME_INVALID");
    expect(tls.verification).toEqual({ verified: false, failedAt: 0, reason: "name mismatch", more: 0 });
  });

  it("cannot see a chain sent out of order: Node links it by issuer, and it verifies (so 'wrong order' is never claimed)", async () => {
    const tls = await tlsOf(pki.wrongOrder);
    expect(tls.verification).toEqual({ verified: true, failedAt: null, reason: null, more: 0 });
    expect(tls.chain.map((certificate) => certificate.subject)).toEqual([
      "localhost",
      "sitediag chain intermediate",
      "sitediag chain root",
    ]);
  });
});
