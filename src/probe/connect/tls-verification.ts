import type { TLSSocket } from "node:tls";
import { certificateField } from "./certificate-text.js";
import { type PeerChain, parsedLeaf } from "./peer-chain.js";

/** A verification failure, coded as OpenSSL and Node code it (or CERT_CHAIN_INCOMPLETE, our own). */
export class TlsVerificationError extends Error {
  constructor(readonly code: string) {
    super(`TLS verification failed: ${code}`);
    this.name = "TlsVerificationError";
  }
}

/** OpenSSL's codes for "the issuer of the leaf was not found". */
const ISSUER_NOT_FOUND: ReadonlySet<string> = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_GET_ISSUER_CERT",
]);

/**
 * Null when the handshake verified (chain and host name); otherwise the
 * failure, with one refinement: a server that sends its leaf alone, where
 * the leaf names where its issuer can be fetched (AIA "CA Issuers", which
 * every public CA's leaves carry), left out its intermediate certificate.
 * Chromium and Safari repair that by fetching it; curl, Firefox without a
 * cached copy, and most HTTP clients fail. A leaf of an issuer nobody trusts,
 * or a chain that was sent but ends in an unknown root, stays as OpenSSL
 * named it. Nothing is fetched: the probe dials only what it was asked to.
 * The caller reads the peer's chain once (peer-chain.ts) and passes it in.
 */
export function verificationFailure(socket: TLSSocket, chain: PeerChain): TlsVerificationError | null {
  if (socket.authorized) return null;
  // Node documents an Error, and stores the code string (verifyError.code).
  const raw: unknown = socket.authorizationError;
  const code =
    typeof raw === "string"
      ? raw
      : raw instanceof Error && "code" in raw && typeof raw.code === "string"
        ? raw.code
        : "UNABLE_TO_VERIFY_LEAF_SIGNATURE";
  if (ISSUER_NOT_FOUND.has(code) && sentLeafAloneWithIssuerAddress(chain)) return new TlsVerificationError("CERT_CHAIN_INCOMPLETE");
  return new TlsVerificationError(code);
}

function sentLeafAloneWithIssuerAddress(chain: PeerChain): boolean {
  // A leaf sent alone whose issuer is unknown links to nothing, or to itself (peer-chain.ts).
  if (chain.leafDer === undefined || !chain.leafAlone) return false;
  // Parsed here only: this is the one reader of the leaf's own fields that no record holds.
  const leaf = parsedLeaf(chain.leafDer);
  if (leaf === undefined) return false;
  // Every field read totally (certificate-text.ts): the leaf is the target's writing.
  if (certificateField(leaf, "subject") === certificateField(leaf, "issuer")) return false;
  return certificateField(leaf, "infoAccess").includes("CA Issuers");
}
