import type { TLSSocket } from "node:tls";
import type { X509Certificate } from "node:crypto";
import { altNameEntries, certificateField, isoDate, nameLine, nameParts, shownText } from "./certificate-text.js";
import type { PeerCertificate, TlsDetail } from "../hop-types.js";
import type { PeerChain } from "./peer-chain.js";
import type { StapledOcsp } from "./stapled-ocsp.js";
import { CHAIN_LIMITS, chainCertificate } from "./chain-certificate.js";
import { chainVerification } from "./chain-verification.js";

// What the hop keeps of a handshake's certificate. The certificate is the
// target's writing: every field is read totally (certificate-text.ts), so
// these return a value whatever it holds, and never throw inside the
// connector's secureConnect listener.

/**
 * The session and leaf certificate of a completed handshake; with
 * `wholeChain` (details asked), every linked certificate and the link that
 * failed: a parse of each certificate's DER, work a hop without details does not do.
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
    certificate: chain.leaf === undefined ? null : peerCertificate(chain.leaf, chain.length),
    verifyError,
    ocsp,
    chain: described.map((link) => chainCertificate(link.raw)),
    verification: wholeChain ? chainVerification(chain, verifyError, Date.now(), chain.links.length - described.length) : null,
  });
}

/**
 * The session and the leaf alone of a handshake that verified, for a hop
 * without details whose warnings read nothing above the leaf (nothing was
 * stapled, so no issuer is needed either): the chain is not read, so its
 * length is not known (null).
 */
export function describeVerifiedLeaf(socket: TLSSocket, leaf: X509Certificate | undefined, ocsp: StapledOcsp): TlsDetail {
  return Object.assign(sessionOf(socket), {
    certificate: leaf === undefined ? null : peerCertificate(leaf, null),
    verifyError: null,
    ocsp,
    chain: [],
    verification: null,
  });
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
