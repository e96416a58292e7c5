import type { HopResponse, TlsDetail } from "../probe/hop-types.js";
import { type TraceWarning, traceWarning } from "./redirect-trace-result.js";

/**
 * certificate_revoked: the server stapled an OCSP answer that says its own
 * certificate is revoked. Only an answer for this leaf (its CertID names the
 * leaf and its issuer) whose signature did not fail counts: an answer for
 * another certificate, or one its issuer never signed, says nothing about
 * this one. A browser that sees such a staple refuses the site (Firefox
 * hard-fails on it). Nothing is asked of a responder: the staple is all we read.
 */

/** The sentence for a TLS session whose staple says its leaf is revoked; null otherwise. Total. */
export function revokedStapleMessage(url: string, tls: TlsDetail | null): string | null {
  const ocsp = tls?.ocsp;
  if (ocsp === undefined || ocsp.status !== "revoked" || !ocsp.forLeaf || ocsp.signature === "failed") return null;
  const since = ocsp.revokedAt === null ? "" : ` since ${ocsp.revokedAt}`;
  const reason = ocsp.revocationReason === null ? "" : ` (${ocsp.revocationReason})`;
  return `The certificate of ${url} is revoked${since}${reason}: the OCSP answer its server staples says so`;
}

/** One hop of redirect-check: its warning, from a connection of its own (a reused one was warned on with the hop that opened it). */
export function hopRevocationWarnings(position: number, response: HopResponse): TraceWarning[] {
  if (response.connectionReused) return [];
  const message = revokedStapleMessage(response.url, response.tls);
  return message === null ? [] : [traceWarning("certificate_revoked", message, position)];
}

/** For is-site-down's details.warnings: the same warning, with its severity, for the request that answered or failed. */
export interface RevocationWarning {
  readonly code: "certificate_revoked";
  readonly severity: "problem";
  readonly message: string;
}

export function siteCheckRevocationWarning(url: string, tls: TlsDetail | null): RevocationWarning | null {
  const message = revokedStapleMessage(url, tls);
  return message === null ? null : { code: "certificate_revoked", severity: "problem", message };
}
