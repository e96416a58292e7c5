import { X509Certificate } from "node:crypto";
import { fromBER, Sequence } from "asn1js";
import { AlgorithmIdentifier } from "pkijs";
import { altNameCount, altNameEntries, certificateField, isoDate, nameLine, nameParts, shownText } from "./certificate-text.js";
import type { ChainCertificate } from "../hop-types.js";
import { DerReadings } from "./der-readings.js";

/**
 * One certificate of a handshake's chain as people read it, from its DER.
 * The DER is the target's writing: every read here returns a value for any
 * input (X509Certificate refusing it, a key type Node cannot export, an
 * ASN.1 structure that is no certificate), and every text is escaped and
 * bounded as the leaf's is (certificate-text.ts).
 */

/** How much of a chain a hop describes: the first certificates, each with its first names. */
export const CHAIN_LIMITS = {
  /** Certificates described, leaf first; the rest are counted (TlsDetail.chainMore). */
  maxCertificates: 10,
  /** subjectAltNames entries kept per chain certificate; the rest are counted (subjectAltNamesMore). */
  maxAltNames: 20,
} as const;

/**
 * Per thread: 128 chain certificates' records, by their DER. Intermediates and
 * roots are shared by many sites and a site's chain stays the same for months:
 * a repeat costs a SHA-256 instead of a parse (26-120 us, Node 24 to 20), the
 * key's export and the text work. Frozen: every hop that shows it shares it.
 */
const RECORDS = new DerReadings<ChainCertificate>(128);

export function chainCertificate(raw: Buffer): ChainCertificate {
  return RECORDS.read([raw], () => {
    const record = describedFrom(raw);
    Object.freeze(record.subjectAltNames);
    return Object.freeze(record);
  });
}

function describedFrom(raw: Buffer): ChainCertificate {
  const certificate = parsed(raw);
  if (certificate === null) return unreadable(raw);
  const subject = certificateField(certificate, "subject");
  const issuer = certificateField(certificate, "issuer");
  const altNames = certificateField(certificate, "subjectAltName");
  const names = altNameEntries(altNames, CHAIN_LIMITS.maxAltNames);
  return {
    subject: nameParts(subject, ["CN"]),
    subjectName: nameLine(subject),
    issuerName: nameLine(issuer),
    subjectAltNames: names,
    subjectAltNamesMore: Math.max(0, altNameCount(altNames) - names.length),
    validFrom: isoDate(certificateField(certificate, "validFrom")),
    validTo: isoDate(certificateField(certificate, "validTo")),
    ...keyOf(certificate),
    signatureAlgorithm: signatureAlgorithmOf(raw),
    fingerprintSha256: certificateField(certificate, "fingerprint256").toUpperCase(),
    selfIssued: subject !== "" && subject === issuer,
  };
}

function parsed(raw: Buffer): X509Certificate | null {
  try {
    return new X509Certificate(raw);
  } catch {
    return null;
  }
}

/** A link Node handed out but X509Certificate will not read: still a place in the chain. */
function unreadable(raw: Buffer): ChainCertificate {
  return {
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
    signatureAlgorithm: signatureAlgorithmOf(raw),
    fingerprintSha256: "",
    selfIssued: false,
  };
}

/** Bits of the curves a certificate may name; a curve not here has size 0 and its name still shown. */
const CURVE_BITS: Readonly<Record<string, number>> = { prime256v1: 256, secp384r1: 384, secp521r1: 521, secp256k1: 256 };
/** EdDSA keys have no details in Node; their size is the curve's. */
const FIXED_BITS: Readonly<Record<string, number>> = { ed25519: 256, ed448: 456, x25519: 256, x448: 448 };

function keyOf(certificate: X509Certificate): Pick<ChainCertificate, "keyType" | "keySize" | "keyCurve"> {
  try {
    const key = certificate.publicKey;
    const type = key.asymmetricKeyType ?? "";
    const details = key.asymmetricKeyDetails ?? {};
    const curve = typeof details.namedCurve === "string" ? details.namedCurve : "";
    const size = typeof details.modulusLength === "number" ? details.modulusLength : (CURVE_BITS[curve] ?? FIXED_BITS[type] ?? 0);
    return { keyType: shownText(type), keySize: size, keyCurve: shownText(curve) };
  } catch {
    // A key OpenSSL cannot load (an unknown algorithm, a broken point): the certificate is still shown.
    return { keyType: "", keySize: 0, keyCurve: "" };
  }
}

/** The names OpenSSL gives the signature algorithms certificates use; any other is shown by its OID. */
const SIGNATURE_ALGORITHMS: Readonly<Record<string, string>> = {
  "1.2.840.113549.1.1.4": "md5WithRSAEncryption",
  "1.2.840.113549.1.1.5": "sha1WithRSAEncryption",
  "1.2.840.113549.1.1.10": "rsassaPss",
  "1.2.840.113549.1.1.11": "sha256WithRSAEncryption",
  "1.2.840.113549.1.1.12": "sha384WithRSAEncryption",
  "1.2.840.113549.1.1.13": "sha512WithRSAEncryption",
  "1.2.840.10045.4.1": "ecdsa-with-SHA1",
  "1.2.840.10045.4.3.2": "ecdsa-with-SHA256",
  "1.2.840.10045.4.3.3": "ecdsa-with-SHA384",
  "1.2.840.10045.4.3.4": "ecdsa-with-SHA512",
  "1.3.101.112": "ED25519",
  "1.3.101.113": "ED448",
};

/**
 * The algorithm the issuer signed with: the certificate's outer
 * signatureAlgorithm (RFC 5280 §4.1.1.2), decoded with asn1js and PKI.js.
 * Node does not expose it. "" when the DER is no certificate.
 *
 * Only that element is given to asn1js: decoding whole certificates into
 * asn1js's objects was the costliest step of reading a chain on a probe
 * thread whose JIT had not warmed, which a hostile chain's first hop often
 * meets, and held its loop past the hostile-target bound (docs/probe.md). A certificate is three DER elements in a
 * SEQUENCE (tbsCertificate, signatureAlgorithm, signatureValue); the
 * element headers are read to step over the first (derElement), and the
 * second is decoded under asn1js's own bounds on depth and nodes.
 */
export function signatureAlgorithmOf(raw: Buffer): string {
  try {
    const outer = derElement(raw, 0);
    if (outer === null) return "";
    const tbs = derElement(raw, outer.contentStart);
    if (tbs === null) return "";
    const start = tbs.contentStart + tbs.length;
    const asn1 = fromBER(new Uint8Array(raw.buffer, raw.byteOffset + start, raw.byteLength - start), { maxDepth: 8, maxNodes: 64 });
    if (asn1.offset === -1 || !(asn1.result instanceof Sequence)) return "";
    const oid = new AlgorithmIdentifier({ schema: asn1.result }).algorithmId;
    return shownText(SIGNATURE_ALGORITHMS[oid] ?? oid);
  } catch {
    return "";
  }
}

/** A SEQUENCE's header at `at` (DER: tag 0x30, then a definite length in at most 4 bytes); null when there is none. */
function derElement(der: Buffer, at: number): { readonly contentStart: number; readonly length: number } | null {
  if (der[at] !== 0x30) return null;
  const first = der[at + 1];
  if (first === undefined) return null;
  if (first < 0x80) return within(der, at + 2, first);
  const count = first & 0x7f;
  if (count === 0 || count > 4 || at + 2 + count > der.length) return null;
  let length = 0;
  for (let index = 0; index < count; index++) length = length * 256 + (der[at + 2 + index] ?? 0);
  return within(der, at + 2 + count, length);
}

function within(der: Buffer, contentStart: number, length: number): { readonly contentStart: number; readonly length: number } | null {
  return contentStart + length <= der.length ? { contentStart, length } : null;
}
