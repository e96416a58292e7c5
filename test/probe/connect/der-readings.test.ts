import { X509Certificate } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { DerReadings } from "../../../src/probe/connect/der-readings.js";
import { readStapledOcsp } from "../../../src/probe/connect/stapled-ocsp.js";
import { leafCertificateRecord, peerCertificate } from "../../../src/probe/connect/tls-detail.js";
import { chainCertificate } from "../../../src/probe/connect/chain-certificate.js";
import { interleavedMedians } from "../../fixtures/interleaved-medians.js";
import { getOcspFixture, type OcspFixture } from "../../fixtures/ocsp-staples.js";
import { getTestPki } from "../../fixtures/test-ca.js";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("DerReadings", () => {
  it("computes a reading once per distinct input, and tells the parts' boundaries apart", () => {
    const readings = new DerReadings<string>(8);
    let computed = 0;
    const read = (parts: (Uint8Array | undefined)[]) => readings.read(parts, () => `reading ${++computed}`);
    expect(read([bytes("ab"), bytes("c"), undefined])).toBe("reading 1");
    expect(read([bytes("ab"), bytes("c"), undefined])).toBe("reading 1");
    expect(read([bytes("a"), bytes("bc"), undefined])).toBe("reading 2");
    // No issuer is not an empty issuer.
    expect(read([bytes("ab"), bytes("c"), new Uint8Array(0)])).toBe("reading 3");
    expect(computed).toBe(3);
  });

  it("keeps at most its capacity, the oldest going first", () => {
    const readings = new DerReadings<number>(3);
    let computed = 0;
    const read = (text: string) => readings.read([bytes(text)], () => ++computed);
    for (const text of ["a", "b", "c", "d"]) read(text);
    expect(readings.size).toBe(3);
    expect(read("d")).toBe(4);
    expect(read("a")).toBe(5);
  });
});

describe("a staple read again", () => {
  let fixture: OcspFixture;
  let leaf: Buffer;
  let issuer: Buffer;
  beforeAll(async () => {
    fixture = await getOcspFixture();
    leaf = new X509Certificate(fixture.revoked.cert).raw;
    issuer = new X509Certificate((await getTestPki()).caPem).raw;
  });

  it("is the same reading, its staleness judged anew", () => {
    const first = readStapledOcsp(fixture.answers.revoked, leaf, issuer, Date.now());
    expect(readStapledOcsp(fixture.answers.revoked, leaf, issuer, Date.now())).toEqual(first);
    expect(readStapledOcsp(fixture.answers.revoked, leaf, issuer, Date.now() + 2 * 86_400_000)).toEqual({ ...first, stale: true });
    expect(readStapledOcsp(fixture.answers.revoked, leaf, issuer, Date.now())).toEqual(first);
  });

  it("costs a fraction of a first reading (a hash, not a parse)", () => {
    readStapledOcsp(fixture.answers.revoked, leaf, issuer, Date.now());
    let serial = 0;
    // Each yardstick staple differs in its last byte (the signature's): read for the first time, in full.
    const fresh = () => {
      const staple = Buffer.from(fixture.answers.revoked);
      staple[staple.length - 1] = serial++ % 256;
      staple.writeUInt16BE(serial, staple.length - 3);
      return readStapledOcsp(staple, leaf, issuer, Date.now());
    };
    const { subject, yardstick } = interleavedMedians(() => readStapledOcsp(fixture.answers.revoked, leaf, issuer, Date.now()), fresh, 40);
    expect(subject).toBeLessThan(yardstick / 4);
  });
});

describe("a leaf read again (a hop without details: tls-detail.ts)", () => {
  let der: Buffer;
  beforeAll(async () => {
    der = new X509Certificate((await getTestPki()).valid.cert).raw;
  });

  it("is the record its first reading made, the chain not counted; bytes that are no certificate read to null", () => {
    const first = leafCertificateRecord(der);
    expect(first).toEqual(peerCertificate(new X509Certificate(der), null));
    expect(first).toMatchObject({ subject: "localhost", chainLength: null });
    expect(leafCertificateRecord(Buffer.from(der))).toBe(first);
    // Shared by every hop that shows the leaf: nobody can change it for the others.
    expect(Object.isFrozen(first) && Object.isFrozen(first?.subjectAltNames)).toBe(true);
    expect(leafCertificateRecord(Buffer.from("not a certificate"))).toBeNull();
  });
});

describe("a chain's certificate read again (details: chain-certificate.ts)", () => {
  let der: Buffer;
  beforeAll(async () => {
    der = new X509Certificate((await getTestPki()).caPem).raw;
  });

  it("is the record its first reading made, shared and frozen", () => {
    const first = chainCertificate(der);
    expect(first).toMatchObject({ subject: "sitediag test CA", selfIssued: true });
    expect(chainCertificate(Buffer.from(der))).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.subjectAltNames)).toBe(true);
  });
});
