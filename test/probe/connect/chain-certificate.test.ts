import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainCertificate, signatureAlgorithmOf } from "../../../src/probe/connect/chain-certificate.js";
import { getChainPki } from "../../fixtures/chain-certificates.js";
import { seededRandom } from "../../fixtures/seeded-random.js";

/**
 * One certificate of a chain, read from its DER, whatever the DER holds: the
 * server's bytes. Every cut, flipped or random input gives a value.
 */
const run = promisify(execFile);
let dir: string;
let leafDer: Buffer;
let rootDer: Buffer;

beforeAll(async () => {
  const pki = await getChainPki();
  leafDer = new X509Certificate(pki.complete.cert).raw;
  rootDer = new X509Certificate(pki.rootPem).raw;
  dir = mkdtempSync(join(tmpdir(), "sitediag-chain-certificate-"));
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("chainCertificate", () => {
  it("reads an RSA-signed EC leaf and an EC root", () => {
    expect(chainCertificate(leafDer)).toMatchObject({
      subject: "localhost",
      keyType: "ec",
      keySize: 256,
      keyCurve: "prime256v1",
      signatureAlgorithm: "sha256WithRSAEncryption",
      selfIssued: false,
    });
    expect(chainCertificate(rootDer)).toMatchObject({
      subject: "sitediag chain root",
      keyType: "ec",
      signatureAlgorithm: "ecdsa-with-SHA256",
      selfIssued: true,
    });
  });

  it("reads an Ed25519 certificate: its key type, the curve's size, the algorithm's name", async () => {
    await run("openssl", [
      "req",
      "-x509",
      "-newkey",
      "ed25519",
      "-nodes",
      "-keyout",
      join(dir, "ed.key"),
      "-out",
      join(dir, "ed.pem"),
      "-days",
      "30",
      "-subj",
      "/CN=ed.test",
    ]);
    const der = new X509Certificate(readFileSync(join(dir, "ed.pem"), "utf8")).raw;
    expect(chainCertificate(der)).toMatchObject({
      subject: "ed.test",
      keyType: "ed25519",
      keySize: 256,
      keyCurve: "",
      signatureAlgorithm: "ED25519",
      selfIssued: true,
    });
  });

  it("keeps a DER X509Certificate will not read as a place with empty fields", () => {
    expect(chainCertificate(Buffer.from("not a certificate"))).toEqual({
      subject: "",
      subjectName: "",
      issuerName: "",
      subjectAltNames: [],
      subjectAltNamesMore: 0,
      validFrom: "",
      validTo: "",
      keyType: "",
      keySize: 0,
      keyCurve: "",
      signatureAlgorithm: "",
      fingerprintSha256: "",
      selfIssued: false,
    });
  });
});

describe("signatureAlgorithmOf", () => {
  it("gives every cut of a certificate a value: '' for a cut one, the name for the whole", () => {
    const names = new Set<string>();
    for (let length = 0; length <= leafDer.length; length++) names.add(signatureAlgorithmOf(leafDer.subarray(0, length)));
    // A cut certificate's outer element says it runs past the bytes there are: no certificate.
    expect([...names].sort()).toEqual(["", "sha256WithRSAEncryption"]);
  });

  it("gives every single-byte change a value, and random bytes '' or a bounded text", () => {
    const random = seededRandom(32);
    for (let index = 0; index < leafDer.length; index++) {
      const changed = Buffer.from(leafDer);
      changed[index] = Math.floor(random() * 256);
      const name = signatureAlgorithmOf(changed);
      expect(typeof name).toBe("string");
      expect(name.length).toBeLessThanOrEqual(320);
    }
    for (let round = 0; round < 500; round++) {
      const bytes = Buffer.from(Array.from({ length: Math.floor(random() * 64) }, () => Math.floor(random() * 256)));
      // A SEQUENCE header first half the time, so the reads go past the first byte.
      if (round % 2 === 0 && bytes.length > 2) bytes[0] = 0x30;
      expect(signatureAlgorithmOf(bytes).length).toBeLessThanOrEqual(320);
    }
  });

  it("names an algorithm it has no name for by its OID", () => {
    // The outer algorithm's OID 1.2.840.10045.4.3.2 (ecdsa-with-SHA256) made 1.2.840.10045.4.3.9 in place.
    const oid = Buffer.from([0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]);
    const at = rootDer.lastIndexOf(oid);
    expect(at).toBeGreaterThan(0);
    const changed = Buffer.from(rootDer);
    changed[at + oid.length - 1] = 0x09;
    expect(signatureAlgorithmOf(changed)).toBe("1.2.840.10045.4.3.9");
  });
});
