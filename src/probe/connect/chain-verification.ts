import type { ChainFailureReason, ChainVerification } from "../hop-types.js";
import type { PeerChain } from "./peer-chain.js";

/**
 * Which link of the chain failed verification, and why in words, from the
 * code OpenSSL or Node gave (tls-verification.ts) and the chain Node linked
 * (peer-chain.ts). OpenSSL names the failure, not the certificate; the
 * certificate is found here from what the code means: the first link out of
 * its dates for a date failure, the top of the chain for an issuer that was
 * not found or a self-signed certificate that is not trusted, the leaf for a
 * name that does not match.
 *
 * "wrong order" is never reported: Node re-links the sent certificates by
 * issuer before handing them out (GetPeerCert in src/crypto/crypto_common.cc),
 * so the order the server sent them in cannot be seen, and OpenSSL verifies
 * a chain sent out of order all the same.
 */

/** The codes whose link can be told; any other is "other", its code beside it (TlsDetail.verifyError). */
const REASON_OF_CODE: Readonly<Record<string, ChainFailureReason>> = {
  CERT_HAS_EXPIRED: "expired",
  CERT_NOT_YET_VALID: "not yet valid",
  UNABLE_TO_GET_ISSUER_CERT: "missing intermediate",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "missing intermediate",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "missing intermediate",
  CERT_CHAIN_INCOMPLETE: "missing intermediate",
  SELF_SIGNED_CERT_IN_CHAIN: "self-signed root sent",
  DEPTH_ZERO_SELF_SIGNED_CERT: "self-signed certificate",
  ERR_TLS_CERT_ALTNAME_INVALID: "name mismatch",
  HOSTNAME_MISMATCH: "name mismatch",
};

/**
 * `now`: the handshake's time (ms since the epoch), the time OpenSSL checked
 * the dates at; `more`: linked certificates the hop does not describe.
 */
export function chainVerification(chain: PeerChain, verifyError: string | null, now: number, more: number): ChainVerification {
  if (verifyError === null) return { verified: true, failedAt: null, reason: null, more };
  const reason = REASON_OF_CODE[verifyError] ?? "other";
  return { verified: false, failedAt: failingLink(chain, reason, now), reason, more };
}

function failingLink(chain: PeerChain, reason: ChainFailureReason, now: number): number | null {
  const links = chain.links;
  if (links.length === 0) return null;
  const top = links.length - 1;
  switch (reason) {
    case "expired":
      return firstIndex(links, (link) => dateOf(link.validTo) < now);
    case "not yet valid":
      return firstIndex(links, (link) => dateOf(link.validFrom) > now);
    case "missing intermediate":
      // The issuer of the top link was neither sent nor trusted; a self-issued top has no issuer to miss.
      return chain.topSelfIssued ? null : top;
    case "self-signed root sent":
      return chain.topSelfIssued ? top : null;
    case "self-signed certificate":
    case "name mismatch":
      return 0;
    case "other":
      return null;
  }
}

/** A date Node printed, in ms; NaN for "" or "Bad time value", which OpenSSL reports under its own code. */
function dateOf(text: string): number {
  return Date.parse(text);
}

function firstIndex<T>(items: readonly T[], test: (item: T) => boolean): number | null {
  const index = items.findIndex(test);
  return index === -1 ? null : index;
}
