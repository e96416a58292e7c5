import type { TLSSocket } from "node:tls";
import type { X509Certificate } from "node:crypto";
import type { PeerCertificate, TlsDetail } from "./hop-types.js";

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
    subject: nameParts(certificate.subject, ["CN"]),
    issuer: nameParts(certificate.issuer, ["CN", "O"]),
    subjectAltNames: splitAltNames(certificate.subjectAltName),
    validFrom: new Date(certificate.validFrom).toISOString(),
    validTo: new Date(certificate.validTo).toISOString(),
    serialNumber: certificate.serialNumber.toUpperCase(),
    fingerprintSha256: certificate.fingerprint256.toUpperCase(),
    chainLength: sentChainLength(certificate),
  };
}

/**
 * The chain the server sent: a peer certificate's `issuerCertificate` links
 * only what came over the wire (not the local trust store), so walking it
 * counts the sent certificates. A self-issued link ends the walk.
 */
function sentChainLength(leaf: X509Certificate): number {
  const seen = new Set<string>([leaf.fingerprint256]);
  let current: X509Certificate | undefined = leaf.issuerCertificate;
  // Bounded: a server cannot make us walk more than it could send in a handshake anyway.
  while (current !== undefined && !seen.has(current.fingerprint256) && seen.size < 64) {
    seen.add(current.fingerprint256);
    current = current.issuerCertificate;
  }
  return seen.size;
}

/** Values of the named attributes, in the order asked, from Node's "KEY=value" lines. */
function nameParts(distinguishedName: string, keys: readonly string[]): string {
  const lines = distinguishedName.split("\n");
  return keys
    .flatMap((key) => lines.filter((line) => line.startsWith(`${key}=`)).map((line) => line.slice(key.length + 1)))
    .join(", ");
}

/** Node's subjectAltName is "DNS:a, IP Address:b"; a name cannot hold ", " unquoted, quoted ones are rare enough to keep whole. */
function splitAltNames(text: string | undefined): string[] {
  if (text === undefined || text === "") return [];
  return text.split(", ").filter((name) => name !== "");
}
