import type { TLSSocket } from "node:tls";
import type { X509Certificate } from "node:crypto";
import { altNameEntries, certificateField, isoDate, nameLine, nameParts, shownText } from "./certificate-text.js";
import type { PeerCertificate, TlsDetail, TlsSummary } from "./hop-types.js";

// What the hop keeps of a handshake's certificate. The certificate is the
// target's writing: every field is read totally (certificate-text.ts), so
// these return a value whatever it holds, and never throw inside the
// connector's secureConnect listener.

/** The session and leaf certificate of a completed handshake. */
export function describeTls(socket: TLSSocket, certificate: X509Certificate | undefined, verifyError: string | null): TlsDetail {
  return {
    protocol: socket.getProtocol(),
    cipher: socket.getCipher()?.name ?? null,
    alpn: typeof socket.alpnProtocol === "string" ? socket.alpnProtocol : null,
    certificate: certificate === undefined ? null : peerCertificate(certificate),
    verifyError,
  };
}

export function peerCertificate(certificate: X509Certificate): PeerCertificate {
  return {
    subject: nameParts(certificateField(certificate, "subject"), ["CN"]),
    issuer: nameParts(certificateField(certificate, "issuer"), ["CN", "O"]),
    subjectAltNames: altNameEntries(certificateField(certificate, "subjectAltName")),
    validFrom: isoDate(certificateField(certificate, "validFrom")),
    validTo: isoDate(certificateField(certificate, "validTo")),
    serialNumber: shownText(certificateField(certificate, "serialNumber").toUpperCase()),
    fingerprintSha256: certificateField(certificate, "fingerprint256").toUpperCase(),
    chainLength: sentChainLength(certificate),
  };
}

/** The summary a response carries (HopResponse.tls); null without a certificate. */
export function summariseTls(socket: TLSSocket, certificate: X509Certificate | undefined): TlsSummary | null {
  if (certificate === undefined) return null;
  return {
    protocol: socket.getProtocol() ?? "unknown",
    subject: nameLine(certificateField(certificate, "subject")),
    issuer: nameLine(certificateField(certificate, "issuer")),
    validFrom: isoDate(certificateField(certificate, "validFrom")),
    validTo: isoDate(certificateField(certificate, "validTo")),
  };
}

/** Certificates in a chain the count walks, at most: no handshake carries more. */
const MAX_CHAIN_WALK = 64;

/**
 * The chain the server sent: a peer certificate's `issuerCertificate` links
 * only what came over the wire (not the local trust store), so walking it
 * counts the sent certificates. A self-issued link ends the walk, as does a
 * link Node cannot read.
 */
function sentChainLength(leaf: X509Certificate): number {
  const seen = new Set<string>([certificateField(leaf, "fingerprint256")]);
  let current = issuerOf(leaf);
  while (current !== undefined && seen.size < MAX_CHAIN_WALK) {
    const fingerprint = certificateField(current, "fingerprint256");
    if (seen.has(fingerprint)) break;
    seen.add(fingerprint);
    current = issuerOf(current);
  }
  return seen.size;
}

function issuerOf(certificate: X509Certificate): X509Certificate | undefined {
  try {
    return certificate.issuerCertificate ?? undefined;
  } catch {
    return undefined;
  }
}
