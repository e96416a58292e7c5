import { createHash, type KeyObject, verify as verifySignature, X509Certificate } from "node:crypto";
import { type BaseBlock, BitString, Constructed, type Enumerated, fromBER, type GeneralizedTime, Integer, Sequence } from "asn1js";
import { BasicOCSPResponse, type Certificate, type CertID, OCSPResponse, type SingleResponse } from "pkijs";
import { type BerLimits, berShape } from "./ber-shape.js";
import type { PeerChain } from "./peer-chain.js";
import { DerReadings } from "./der-readings.js";

// The OCSP answer a server staples to its handshake (RFC 6066 status_request,
// RFC 6960), read as the server shows it. Nothing is ever asked of an OCSP
// responder or a CRL address: those are addresses the certificate's author
// chose, and following them would let a stranger aim this service's
// requests (SSRF). Every byte here is the target's: parsing is bounded
// (STAPLED_OCSP_MAX_BYTES, MAX_SINGLE_RESPONSES, MAX_RESPONDER_CERTS) and
// total (a value for any input; never a throw into the connector's listeners).

/** Stapled bytes read at most; a larger answer is reported invalid, unparsed. Real answers are 0.5 to 4 KiB. */
export const STAPLED_OCSP_MAX_BYTES = 16_384;
/**
 * The tree a staple may make before it is parsed (ber-shape.ts). The bytes
 * cap bounds bytes, not work: 16 KiB of two-byte elements is 8,000 of them,
 * which asn1js takes 84-134 ms to build. A responder's answer is about 100
 * elements, 150-250 more with each certificate it carries (embedded
 * structures counted as asn1js tries them): 600 holds two. Real answers
 * nest 12-20 deep.
 */
export const STAPLE_SHAPE_LIMITS: BerLimits = { maxElements: 600, maxDepth: 32 };
/**
 * The leaf and its issuer are read for three fields (tbsFieldsOf) without
 * asn1js's search inside every OCTET STRING, under a bound on nodes: a
 * certificate's own elements number a few hundred; its extensions' contents
 * (thousands of names) are not walked.
 */
const CERTIFICATE_PARSE = { parseEmbedded: false, maxNodes: 4_096, maxDepth: 32 } as const;
const OUTER_PARSE = { parseEmbedded: false, maxNodes: 1_000, maxDepth: 32 } as const;
/** Certificate statuses in one answer looked at for the leaf's. */
const MAX_SINGLE_RESPONSES = 16;
/** Certificates in an answer tried as a delegated responder. */
const MAX_RESPONDER_CERTS = 4;

export type OcspStatus = "good" | "revoked" | "unknown" | "none" | "invalid";
/** verified: signed by the leaf's issuer, or by a responder the issuer certified for OCSP signing. */
export type OcspSignature = "verified" | "failed" | "unchecked";

export interface StapledOcsp {
  /** none: nothing stapled; invalid: stapled bytes that are no usable answer (invalidReason says why). */
  readonly status: OcspStatus;
  readonly invalidReason: string | null;
  /** ISO-8601; revoked only. */
  readonly revokedAt: string | null;
  /** RFC 5280 CRLReason name (keyCompromise, ...); null when the answer gives none. */
  readonly revocationReason: string | null;
  readonly producedAt: string | null;
  readonly thisUpdate: string | null;
  readonly nextUpdate: string | null;
  /** The status's CertID names the leaf: its serial, its issuer's name hash and (when the chain gives the issuer) its issuer's key hash. */
  readonly forLeaf: boolean;
  /** Past its nextUpdate when read. */
  readonly stale: boolean;
  readonly signature: OcspSignature;
  /** Why the signature is failed or unchecked, in words; null when verified. */
  readonly signatureNote: string | null;
  /** Bytes stapled (0 for none). */
  readonly sizeBytes: number;
}

export const NO_STAPLE: StapledOcsp = Object.freeze({
  status: "none",
  invalidReason: null,
  revokedAt: null,
  revocationReason: null,
  producedAt: null,
  thisUpdate: null,
  nextUpdate: null,
  forLeaf: false,
  stale: false,
  signature: "unchecked",
  signatureNote: null,
  sizeBytes: 0,
});

/**
 * The staple of a completed handshake (the socket's 'OCSPResponse' payload,
 * null when none came), read against the leaf and its issuer as the
 * handshake's chain gives them (peer-chain.ts).
 */
export function stapledOcspOf(stapled: Buffer | null, chain: Pick<PeerChain, "leafDer" | "issuer">, now: number = Date.now()): StapledOcsp {
  if (stapled === null || stapled.length === 0 || stapled.length > STAPLED_OCSP_MAX_BYTES)
    return readStapledOcsp(stapled, undefined, undefined, now);
  return readStapledOcsp(stapled, chain.leafDer, chain.issuer, now);
}

/** A total reading of stapled bytes against the leaf and its issuer (DER; undefined when unknown). */
export function readStapledOcsp(
  stapled: Uint8Array | null,
  leafDer: Uint8Array | undefined,
  issuerDer: Uint8Array | undefined,
  now: number,
): StapledOcsp {
  if (stapled === null || stapled.length === 0) return NO_STAPLE;
  if (stapled.length > STAPLED_OCSP_MAX_BYTES)
    return invalid(stapled.length, `${stapled.length} bytes stapled, over the ${STAPLED_OCSP_MAX_BYTES}-byte cap: not read`);
  const reading = READINGS.read([stapled, leafDer, issuerDer], () => {
    // Limits before work: the tree is sized from its headers before asn1js builds it.
    if (berShape(stapled, STAPLE_SHAPE_LIMITS).kind !== "fits") return invalid(stapled.length, NOT_AN_ANSWER);
    try {
      return read(stapled, leafDer, issuerDer);
    } catch {
      // pkijs and asn1js throw on malformed input; their words are not the target's, but a fixed sentence is enough.
      return invalid(stapled.length, NOT_AN_ANSWER);
    }
  });
  // Whether it is stale is the one thing that changes while a reading is remembered.
  const stale = reading.nextUpdate !== null && Date.parse(reading.nextUpdate) < now;
  return stale === reading.stale ? reading : Object.assign({}, reading, { stale });
}

/** For bytes that are no answer: malformed, or a tree past STAPLE_SHAPE_LIMITS (no responder's answer is near them). */
const NOT_AN_ANSWER = "not a DER-encoded OCSP response";

/** Per thread: 256 readings of a few hundred bytes each; the staples and certificates they were read from are not kept. */
const READINGS = new DerReadings<StapledOcsp>(256);

function read(stapled: Uint8Array, leafDer: Uint8Array | undefined, issuerDer: Uint8Array | undefined): StapledOcsp {
  // The outer answer without asn1js's try inside its OCTET STRING: the basic response there is parsed once, below.
  const parsed = fromBER(stapled, OUTER_PARSE);
  if (parsed.offset === -1) return invalid(stapled.length, NOT_AN_ANSWER);
  const outer = new OCSPResponse({ schema: parsed.result });
  const code = outer.responseStatus.valueBlock.valueDec;
  if (code !== 0) return invalid(stapled.length, `the responder's answer is ${RESPONSE_STATUS[code] ?? `status ${code}`}, not successful`);
  if (outer.responseBytes === undefined) return invalid(stapled.length, "a successful answer without a response");
  if (outer.responseBytes.responseType !== BASIC_RESPONSE) return invalid(stapled.length, "not a basic OCSP response");
  const basic = BasicOCSPResponse.fromBER(outer.responseBytes.response.valueBlock.valueHexView);
  const singles = basic.tbsResponseData.responses.slice(0, MAX_SINGLE_RESPONSES);
  const subject = subjectOf(leafDer, issuerDer);
  const mine = subject === null ? undefined : singles.find((single) => certIdNames(single.certID, subject));
  const chosen = mine ?? singles[0];
  if (chosen === undefined) return invalid(stapled.length, "an answer with no certificate status");
  const status = statusOf(chosen);
  if (status === null) return invalid(stapled.length, "a certificate status that is none of good, revoked or unknown");
  const nextUpdate = chosen.nextUpdate === undefined ? null : isoOf(chosen.nextUpdate);
  const signed = signatureOf(basic, subject?.issuer ?? null);
  return {
    status: status.status,
    invalidReason: null,
    revokedAt: status.revokedAt,
    revocationReason: status.reason,
    producedAt: isoOf(basic.tbsResponseData.producedAt),
    thisUpdate: isoOf(chosen.thisUpdate),
    nextUpdate,
    forLeaf: mine !== undefined,
    stale: false,
    signature: signed.signature,
    signatureNote: signed.note,
    sizeBytes: stapled.length,
  };
}

function invalid(sizeBytes: number, reason: string): StapledOcsp {
  return Object.assign({}, NO_STAPLE, { status: "invalid" as const, invalidReason: reason, sizeBytes });
}

const BASIC_RESPONSE = "1.3.6.1.5.5.7.48.1.1";
const OCSP_SIGNING = "1.3.6.1.5.5.7.3.9";
const RESPONSE_STATUS: Readonly<Record<number, string>> = {
  1: "malformedRequest",
  2: "internalError",
  3: "tryLater",
  5: "sigRequired",
  6: "unauthorized",
};
const CRL_REASONS: Readonly<Record<number, string>> = {
  0: "unspecified",
  1: "keyCompromise",
  2: "cACompromise",
  3: "affiliationChanged",
  4: "superseded",
  5: "cessationOfOperation",
  6: "certificateHold",
  8: "removeFromCRL",
  9: "privilegeWithdrawn",
  10: "aACompromise",
};
/** CertID hash algorithms (RFC 6960 allows any; SHA-1 is what responders use). */
const CERT_ID_HASHES: Readonly<Record<string, string>> = {
  "1.3.14.3.2.26": "sha1",
  "2.16.840.1.101.3.4.2.1": "sha256",
  "2.16.840.1.101.3.4.2.2": "sha384",
  "2.16.840.1.101.3.4.2.3": "sha512",
};
/** Signature algorithms checked, with their hash; null for one that names none (Ed25519). */
const SIGNATURE_HASHES: Readonly<Record<string, string | null>> = {
  "1.2.840.113549.1.1.5": "sha1",
  "1.2.840.113549.1.1.11": "sha256",
  "1.2.840.113549.1.1.12": "sha384",
  "1.2.840.113549.1.1.13": "sha512",
  "1.2.840.10045.4.1": "sha1",
  "1.2.840.10045.4.3.2": "sha256",
  "1.2.840.10045.4.3.3": "sha384",
  "1.2.840.10045.4.3.4": "sha512",
  "1.3.101.112": null,
};

/** What a CertID must name for the answer to be the leaf's. */
interface Subject {
  readonly serial: Uint8Array;
  readonly issuerName: Uint8Array;
  /** The issuer's public key bits and key; null when the chain does not give the issuer. */
  readonly issuer: { readonly keyBits: Uint8Array; readonly key: KeyObject } | null;
}

// The leaf and its issuer are read with asn1js alone (a plain BER tree, no
// schema check): pkijs's Certificate takes several times as long, and only
// the serial, the issuer's name and the issuer's key bits are needed here.

function subjectOf(leafDer: Uint8Array | undefined, issuerDer: Uint8Array | undefined): Subject | null {
  const leaf = tbsFieldsOf(leafDer);
  const serial = leaf?.serial;
  const issuerName = leaf?.issuer;
  if (!(serial instanceof Integer) || !(issuerName instanceof Sequence)) return null;
  return { serial: serial.valueBlock.valueHexView, issuerName: issuerName.valueBeforeDecodeView, issuer: issuerOf(issuerDer) };
}

function issuerOf(issuerDer: Uint8Array | undefined): Subject["issuer"] {
  const keyBits = childrenOf(tbsFieldsOf(issuerDer)?.publicKeyInfo)?.[1];
  if (issuerDer === undefined || !(keyBits instanceof BitString)) return null;
  try {
    return { keyBits: keyBits.valueBlock.valueHexView, key: new X509Certificate(issuerDer).publicKey };
  } catch {
    return null;
  }
}

interface TbsFields {
  readonly serial: unknown;
  readonly issuer: unknown;
  readonly publicKeyInfo: unknown;
}

/** TBSCertificate: [0] version (optional), serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo, ... */
function tbsFieldsOf(certificateDer: Uint8Array | undefined): TbsFields | null {
  if (certificateDer === undefined) return null;
  const tbs = childrenOf(childrenOf(fromBER(certificateDer, CERTIFICATE_PARSE).result)?.[0]);
  if (tbs === null) return null;
  const first = tbs[0];
  const skip = first !== undefined && first.idBlock.tagClass === 3 && first.idBlock.tagNumber === 0 ? 1 : 0;
  return { serial: tbs[skip], issuer: tbs[skip + 2], publicKeyInfo: tbs[skip + 5] };
}

function childrenOf(block: unknown): readonly BaseBlock[] | null {
  return block instanceof Constructed ? block.valueBlock.value : null;
}

function certIdNames(id: CertID, subject: Subject): boolean {
  const hash = CERT_ID_HASHES[id.hashAlgorithm.algorithmId];
  if (hash === undefined) return false;
  const digest = (bytes: Uint8Array) => createHash(hash).update(bytes).digest();
  return (
    sameBytes(id.serialNumber.valueBlock.valueHexView, subject.serial) &&
    sameBytes(id.issuerNameHash.valueBlock.valueHexView, digest(subject.issuerName)) &&
    (subject.issuer === null || sameBytes(id.issuerKeyHash.valueBlock.valueHexView, digest(subject.issuer.keyBits)))
  );
}

interface ReadStatus {
  readonly status: "good" | "revoked" | "unknown";
  readonly revokedAt: string | null;
  readonly reason: string | null;
}

/** certStatus is a CHOICE of [0] good, [1] revoked (time, optional [0] reason), [2] unknown; pkijs leaves it as parsed ASN.1. */
function statusOf(single: SingleResponse): ReadStatus | null {
  const choice: unknown = single.certStatus;
  if (typeof choice !== "object" || choice === null || !("idBlock" in choice)) return null;
  const id = (choice as Constructed).idBlock;
  if (id.tagClass !== 3) return null;
  if (id.tagNumber === 0) return { status: "good", revokedAt: null, reason: null };
  if (id.tagNumber === 2) return { status: "unknown", revokedAt: null, reason: null };
  if (id.tagNumber !== 1) return null;
  const [time, reason] = (choice as Constructed).valueBlock.value;
  const revokedAt = time === undefined ? null : isoOf((time as GeneralizedTime).toDate());
  const code = (reason as Constructed | undefined)?.valueBlock.value[0] as Enumerated | undefined;
  return {
    status: "revoked",
    revokedAt,
    reason: code === undefined ? null : (CRL_REASONS[code.valueBlock.valueDec] ?? `reason ${code.valueBlock.valueDec}`),
  };
}

interface Signed {
  readonly signature: OcspSignature;
  readonly note: string | null;
}

/** Checked synchronously with Node's crypto over the bytes pkijs kept, against the issuer the chain gives. */
function signatureOf(basic: BasicOCSPResponse, issuer: Subject["issuer"]): Signed {
  if (issuer === null) return { signature: "unchecked", note: "the chain does not give the leaf's issuer" };
  const algorithm = basic.signatureAlgorithm.algorithmId;
  const hash = SIGNATURE_HASHES[algorithm];
  if (hash === undefined) return { signature: "unchecked", note: `signature algorithm ${shownOid(algorithm)} is not checked` };
  const tbs = basic.tbsResponseData.tbsView;
  const signature = basic.signature.valueBlock.valueHexView;
  const signedBy = (key: KeyObject) => {
    try {
      return verifySignature(hash, tbs, key, signature);
    } catch {
      return false;
    }
  };
  if (signedBy(issuer.key)) return { signature: "verified", note: null };
  for (const candidate of (basic.certs ?? []).slice(0, MAX_RESPONDER_CERTS)) {
    const responder = delegatedResponder(candidate, issuer.key);
    if (responder !== null && signedBy(responder)) return { signature: "verified", note: null };
  }
  return { signature: "failed", note: "signed neither by the leaf's issuer nor by a responder it certified for OCSP signing" };
}

/** A certificate in the answer that the issuer signed for OCSP signing (RFC 6960 4.2.2.2): its key; else null. */
function delegatedResponder(candidate: Certificate, issuerKey: KeyObject): KeyObject | null {
  try {
    const certificate = new X509Certificate(new Uint8Array(candidate.toSchema().toBER(false)));
    if (!certificate.verify(issuerKey) || !(certificate.keyUsage ?? []).includes(OCSP_SIGNING)) return null;
    return certificate.publicKey;
  } catch {
    return null;
  }
}

/** An OID as asn1js writes it is the target's: digits and dots only, at most 64 characters shown. */
function shownOid(oid: string): string {
  const clean = oid.replace(/[^0-9.]/g, "?");
  return clean.length > 64 ? `${clean.slice(0, 63)}…` : clean;
}

function isoOf(date: Date): string | null {
  const time = date.getTime();
  return Number.isFinite(time) ? date.toISOString() : null;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}
