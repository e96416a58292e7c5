import type { TLSSocket } from "node:tls";
import type { X509Certificate } from "node:crypto";
import { altNameEntries, certificateField, isoDate, nameLine, nameParts, shownText } from "./certificate-text.js";
import type { PeerCertificate, TlsDetail } from "../hop-types.js";
import { type PeerChain, parsedLeaf } from "./peer-chain.js";
import { NO_STAPLE, type StapledOcsp } from "./stapled-ocsp.js";
import { CHAIN_LIMITS, chainCertificate } from "./chain-certificate.js";
import { chainVerification } from "./chain-verification.js";
import { DerReadings } from "./der-readings.js";

// What the hop keeps of a handshake's certificate. The certificate is the
// target's writing: every field is read totally (certificate-text.ts), so
// these return a value whatever it holds, and never throw inside the
// connector's secureConnect listener.

/**
 * The session and leaf certificate of a completed handshake; with
 * `wholeChain` (details asked), every linked certificate and the link that
 * failed: a reading of each certificate's DER, work a hop without details
 * does not do. Each is read once per thread (leafCertificateRecord,
 * chainCertificate), and a repeat costs a hash.
 */
export function describeTls(
  socket: TLSSocket,
  chain: PeerChain,
  verifyError: string | null,
  ocsp: StapledOcsp,
  wholeChain: boolean,
): TlsDetail {
  const described = wholeChain ? chain.links.slice(0, CHAIN_LIMITS.maxCertificates) : [];
  return Object.assign(sessionOf(socket), {
    certificate: chain.leafDer === undefined ? null : countedLeafRecord(chain.leafDer, chain.length),
    verifyError,
    ocsp,
    chain: described.map((link) => chainCertificate(link.raw)),
    verification: wholeChain ? chainVerification(chain, verifyError, Date.now(), chain.links.length - described.length) : null,
  });
}

/**
 * The session and the leaf alone of a handshake that verified with nothing
 * stapled, for a hop without details whose warnings read nothing above the
 * leaf: the chain is not read, so its length is not known (null). `leafDer`
 * is the leaf Node's own name check read.
 */
export function describeVerifiedLeaf(socket: TLSSocket, leafDer: Buffer): TlsDetail {
  return Object.assign(sessionOf(socket), {
    certificate: leafCertificateRecord(leafDer),
    verifyError: null,
    ocsp: NO_STAPLE,
    chain: [],
    verification: null,
  });
}

/**
 * Per thread: the records of 128 leaves, by their DER. A site shows the same
 * leaf for months and is checked again and again (a migration audit traces
 * many URLs of a few hosts): a repeat costs a SHA-256 of the DER, not a parse
 * (26-120 us, Node 24 to 20) and the text work. A record holds at most 100
 * names of 320 characters, so at worst a few MiB. Frozen: every hop that
 * shows the leaf shares it.
 */
const LEAF_RECORDS = new DerReadings<PeerCertificate | null>(128);

/** The record of a leaf, its chain not counted (describeTls adds the count); null for bytes Node cannot parse as a certificate. */
export function leafCertificateRecord(der: Buffer): PeerCertificate | null {
  return LEAF_RECORDS.read([der], () => {
    const leaf = parsedLeaf(der);
    if (leaf === undefined) return null;
    const record = peerCertificate(leaf, null);
    Object.freeze(record.subjectAltNames);
    return Object.freeze(record);
  });
}

/** The leaf's record with the chain's count: the thread's reading of it, copied (the names stay shared and frozen). */
function countedLeafRecord(der: Buffer, chainLength: number): PeerCertificate | null {
  const record = leafCertificateRecord(der);
  return record === null ? null : Object.assign({}, record, { chainLength });
}

function sessionOf(socket: TLSSocket): Pick<TlsDetail, "protocol" | "cipher" | "alpn"> {
  return {
    protocol: socket.getProtocol(),
    cipher: socket.getCipher()?.name ?? null,
    alpn: typeof socket.alpnProtocol === "string" ? socket.alpnProtocol : null,
  };
}

/** `chainLength`: the certificates the server sent, leaf included (PeerChain.length); null when only the leaf was read. */
export function peerCertificate(certificate: X509Certificate, chainLength: number | null): PeerCertificate {
  const subject = certificateField(certificate, "subject");
  const issuer = certificateField(certificate, "issuer");
  return {
    subject: nameParts(subject, ["CN"]),
    issuer: nameParts(issuer, ["CN", "O"]),
    subjectName: nameLine(subject),
    issuerName: nameLine(issuer),
    subjectAltNames: altNameEntries(certificateField(certificate, "subjectAltName")),
    validFrom: isoDate(certificateField(certificate, "validFrom")),
    validTo: isoDate(certificateField(certificate, "validTo")),
    serialNumber: shownText(certificateField(certificate, "serialNumber").toUpperCase()),
    fingerprintSha256: certificateField(certificate, "fingerprint256").toUpperCase(),
    chainLength,
  };
}
