import { X509Certificate } from "node:crypto";
import { OctetString } from "asn1js";
import { BasicOCSPResponse, OCSPResponse } from "pkijs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readStapledOcsp, STAPLED_OCSP_MAX_BYTES, type StapledOcsp } from "../../../src/probe/connect/stapled-ocsp.js";
import type { HopOutcome, Prober } from "../../../src/probe/hop-types.js";
import { getOcspFixture, type OcspFixture, startStaplingTarget } from "../../fixtures/ocsp-staples.js";
import { seededRandom } from "../../fixtures/seeded-random.js";
import { getTestPki, type KeyPair } from "../../fixtures/test-ca.js";
import { loopbackProber } from "../../fixtures/test-env.js";

let fixture: OcspFixture;
let caDer: Buffer;
let prober: Prober;

beforeAll(async () => {
  const pki = await getTestPki();
  fixture = await getOcspFixture();
  caDer = new X509Certificate(pki.caPem).raw;
  prober = loopbackProber({ ca: pki.caPem });
});
afterAll(async () => {
  await prober.close();
});

const der = (pair: KeyPair) => new X509Certificate(pair.cert).raw;
const DAY_MS = 86_400_000;

describe("readStapledOcsp: the answers an openssl responder made", () => {
  it("good, for this leaf, signed by its issuer, fresh", () => {
    const read = readStapledOcsp(fixture.answers.good, der(fixture.good), caDer, Date.now());
    expect(read).toMatchObject({
      status: "good",
      forLeaf: true,
      stale: false,
      signature: "verified",
      signatureNote: null,
      invalidReason: null,
      revokedAt: null,
    });
    expect(read.sizeBytes).toBe(fixture.answers.good.length);
    const thisUpdate = Date.parse(read.thisUpdate ?? "");
    expect(Math.abs(thisUpdate - Date.now())).toBeLessThan(DAY_MS);
    expect(Date.parse(read.nextUpdate ?? "") - thisUpdate).toBe(DAY_MS);
  });

  it("revoked, with the time and reason the index gives", () => {
    const read = readStapledOcsp(fixture.answers.revoked, der(fixture.revoked), caDer, Date.now());
    expect(read).toMatchObject({
      status: "revoked",
      revokedAt: fixture.revokedAt,
      revocationReason: "keyCompromise",
      forLeaf: true,
      signature: "verified",
    });
  });

  it("unknown: a leaf the responder has no record of", () => {
    expect(readStapledOcsp(fixture.answers.unknown, der(fixture.unknown), caDer, Date.now())).toMatchObject({
      status: "unknown",
      forLeaf: true,
      signature: "verified",
    });
  });

  it("an answer for another certificate says so (its status shown, forLeaf false)", () => {
    expect(readStapledOcsp(fixture.answers.revoked, der(fixture.good), caDer, Date.now())).toMatchObject({
      status: "revoked",
      forLeaf: false,
    });
  });

  it("stale once past its nextUpdate", () => {
    expect(readStapledOcsp(fixture.answers.good, der(fixture.good), caDer, Date.now() + 2 * DAY_MS)).toMatchObject({
      status: "good",
      stale: true,
    });
  });

  it("a delegated responder the issuer certified for OCSP signing verifies; a key it never certified fails", () => {
    expect(readStapledOcsp(fixture.answers.goodDelegated, der(fixture.good), caDer, Date.now())).toMatchObject({
      status: "good",
      signature: "verified",
    });
    const forged = readStapledOcsp(fixture.answers.goodForged, der(fixture.good), caDer, Date.now());
    expect(forged).toMatchObject({ status: "good", forLeaf: true, signature: "failed" });
    expect(forged.signatureNote).toMatch(/signed neither by the leaf's issuer/);
  });

  it("a signature algorithm not checked is said by its OID", () => {
    // ecdsa-with-SHA256 (1.2.840.10045.4.3.2); its first occurrence is the answer's own signatureAlgorithm (the embedded certificate's come later).
    const staple = Buffer.from(fixture.answers.good);
    const at = staple.indexOf(Buffer.from("06082a8648ce3d040302", "hex"));
    expect(at).toBeGreaterThan(0);
    staple[at + 9] = 0x09;
    expect(readStapledOcsp(staple, der(fixture.good), caDer, Date.now())).toMatchObject({
      status: "good",
      signature: "unchecked",
      signatureNote: "signature algorithm 1.2.840.10045.4.3.9 is not checked",
    });
  });

  it("an OID of any length is shown cut to 64 characters", () => {
    const outer = OCSPResponse.fromBER(fixture.answers.good);
    const bytes = outer.responseBytes;
    if (bytes === undefined) throw new Error("the fixture's answer has no response");
    const basic = BasicOCSPResponse.fromBER(bytes.response.valueBlock.valueHexView);
    basic.signatureAlgorithm.algorithmId = `1.3.${Array.from({ length: 600 }, () => "7").join(".")}`;
    bytes.response = new OctetString({ valueHex: basic.toSchema().toBER() });
    const read = readStapledOcsp(Buffer.from(outer.toSchema().toBER()), der(fixture.good), caDer, Date.now());
    expect(read).toMatchObject({ status: "good", signature: "unchecked" });
    expect(read.signatureNote).toBe(`signature algorithm 1.3.${"7.".repeat(29)}7…${" is not checked"}`);
  });

  it("without the issuer: matched by serial and issuer name, the signature unchecked and said why", () => {
    expect(readStapledOcsp(fixture.answers.good, der(fixture.good), undefined, Date.now())).toMatchObject({
      status: "good",
      forLeaf: true,
      signature: "unchecked",
      signatureNote: "the chain does not give the leaf's issuer",
    });
  });
});

describe("readStapledOcsp: whatever is stapled, a bounded value and never a throw", () => {
  it("nothing stapled: none", () => {
    expect(readStapledOcsp(null, der(fixture.good), caDer, Date.now())).toMatchObject({ status: "none", sizeBytes: 0 });
    expect(readStapledOcsp(new Uint8Array(0), der(fixture.good), caDer, Date.now())).toMatchObject({ status: "none" });
  });

  it("garbage, a truncated answer, a responder's error status", () => {
    expect(readStapledOcsp(Buffer.from("not an OCSP answer"), der(fixture.good), caDer, Date.now())).toMatchObject({
      status: "invalid",
      invalidReason: "not a DER-encoded OCSP response",
    });
    expect(readStapledOcsp(fixture.answers.good.subarray(0, 200), der(fixture.good), caDer, Date.now())).toMatchObject({
      status: "invalid",
    });
    // OCSPResponse { responseStatus tryLater }
    expect(readStapledOcsp(Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x03]), der(fixture.good), caDer, Date.now())).toMatchObject({
      status: "invalid",
      invalidReason: "the responder's answer is tryLater, not successful",
    });
  });

  it("nesting as deep as the cap allows (indefinite and definite lengths, constructed strings)", () => {
    for (const unit of [
      [0x30, 0x80],
      [0x30, 0x82],
      [0x24, 0x80],
      [0xa0, 0x80],
    ]) {
      const nested = Buffer.alloc(STAPLED_OCSP_MAX_BYTES);
      for (let at = 0; at + 1 < nested.length; at += 2) nested.set(unit, at);
      expect(readStapledOcsp(nested, der(fixture.good), caDer, Date.now())).toMatchObject({
        status: "invalid",
        invalidReason: "not a DER-encoded OCSP response",
      });
    }
  });

  it("over the cap: invalid and not parsed, whatever it holds", () => {
    const huge = Buffer.concat([fixture.answers.good, Buffer.alloc(STAPLED_OCSP_MAX_BYTES)]);
    expect(readStapledOcsp(huge, der(fixture.good), caDer, Date.now())).toMatchObject({
      status: "invalid",
      sizeBytes: huge.length,
      invalidReason: `${huge.length} bytes stapled, over the ${STAPLED_OCSP_MAX_BYTES}-byte cap: not read`,
    });
  });

  it("every one of 600 mutated answers reads to a value", () => {
    const random = seededRandom(32);
    const statuses = new Set<string>();
    for (let round = 0; round < 600; round++) {
      const bytes = Buffer.from(round % 2 === 0 ? fixture.answers.revoked : fixture.answers.goodDelegated);
      for (let flips = 1 + Math.floor(random() * 4); flips > 0; flips--)
        bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
      const read: StapledOcsp = readStapledOcsp(bytes, der(fixture.revoked), caDer, Date.now());
      statuses.add(read.status);
      expect(["good", "revoked", "unknown", "invalid"]).toContain(read.status);
      expect(read.invalidReason === null).toBe(read.status !== "invalid");
      // Every text is ours or a date: short, printable.
      for (const value of Object.values(read)) if (typeof value === "string") expect(value).toMatch(/^[\x20-\x7e…]{0,160}$/);
    }
    // Mutations both break the answer and leave it readable (with a failed signature, mostly).
    expect(statuses).toContain("invalid");
    expect(statuses).toContain("revoked");
  });
});

function answered(outcome: HopOutcome) {
  if (outcome.kind !== "response") throw new Error(`expected a response, got ${outcome.kind}`);
  return outcome.response;
}

describe("a hop asks for a staple in every handshake and reports it", () => {
  const cases: readonly [string, (f: OcspFixture) => KeyPair, (f: OcspFixture) => Buffer | null, Partial<StapledOcsp>][] = [
    ["good", (f) => f.good, (f) => f.answers.good, { status: "good", forLeaf: true, signature: "verified", stale: false }],
    [
      "revoked",
      (f) => f.revoked,
      (f) => f.answers.revoked,
      { status: "revoked", forLeaf: true, signature: "verified", revocationReason: "keyCompromise" },
    ],
    ["unknown", (f) => f.unknown, (f) => f.answers.unknown, { status: "unknown", forLeaf: true }],
    ["none stapled", (f) => f.good, () => null, { status: "none", sizeBytes: 0 }],
    [
      "garbage",
      (f) => f.good,
      () => Buffer.from("garbage stapled"),
      { status: "invalid", invalidReason: "not a DER-encoded OCSP response" },
    ],
    ["for another certificate", (f) => f.good, (f) => f.answers.revoked, { status: "revoked", forLeaf: false }],
    ["huge", (f) => f.good, () => Buffer.alloc(48 * 1024, 0x30), { status: "invalid", sizeBytes: 48 * 1024 }],
  ];
  it.each(cases)("%s", async (_label, leaf, staple, expected) => {
    const target = await startStaplingTarget(leaf(fixture), staple(fixture));
    try {
      const response = answered(
        await prober.hop({ url: new URL(target.url), method: "GET", timeoutMs: 5_000, ports: { kind: "fetch-safe" } }),
      );
      expect(response.status).toBe(200);
      expect(response.tls?.verifyError).toBeNull();
      expect(response.tls?.ocsp).toMatchObject(expected);
      expect(target.stapleRequests()).toBe(1);
    } finally {
      await target.close();
    }
  });

  it("over TLS 1.2 too, where the staple is a handshake message of its own", async () => {
    const target = await startStaplingTarget(fixture.revoked, fixture.answers.revoked, { maxVersion: "TLSv1.2" });
    try {
      const response = answered(
        await prober.hop({ url: new URL(target.url), method: "GET", timeoutMs: 5_000, ports: { kind: "fetch-safe" } }),
      );
      expect(response.tls?.protocol).toBe("TLSv1.2");
      expect(response.tls?.ocsp).toMatchObject({ status: "revoked", forLeaf: true, signature: "verified" });
    } finally {
      await target.close();
    }
  });

  it("over HTTP/2 (the same handshake, the protocol chosen in ALPN)", async () => {
    const target = await startStaplingTarget(fixture.good, fixture.answers.good, { h2: true });
    try {
      const response = answered(
        await prober.hop({ url: new URL(target.url), method: "GET", timeoutMs: 5_000, ports: { kind: "fetch-safe" } }),
      );
      expect(response.httpVersion).toBe("2");
      expect(response.tls?.ocsp).toMatchObject({ status: "good", forLeaf: true, signature: "verified" });
    } finally {
      await target.close();
    }
  });

  it("no request ever goes to the OCSP responder, CA Issuers or CRL address a certificate names", async () => {
    const before = fixture.responder.contacts();
    for (const [leaf, staple] of [
      [fixture.good, null],
      [fixture.revoked, fixture.answers.revoked],
      [fixture.good, fixture.answers.goodForged],
    ] as const) {
      const target = await startStaplingTarget(leaf, staple);
      try {
        answered(await prober.hop({ url: new URL(target.url), method: "GET", timeoutMs: 5_000, ports: { kind: "fetch-safe" } }));
      } finally {
        await target.close();
      }
    }
    // The responder is on loopback, which this prober may reach: only our own restraint keeps it at zero.
    expect(before).toBe(0);
    expect(fixture.responder.contacts()).toBe(0);
  });
});
