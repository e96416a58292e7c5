import type { TlsDetail } from "../probe/hop-types.js";
import type { RequestRecord } from "./diagnostic-details.js";

/**
 * Certificates close to their end: the warning `certificate_expires_soon`.
 * A certificate that has already expired is not one: the handshake failed
 * verification and says so (tls_failed, the chain's `expired` link). The
 * leaf of every HTTPS answer is read; with details, every certificate of its
 * chain too (TlsDetail.chain), and the warning names which one. One warning
 * per distinct certificate (by fingerprint), at the first request that saw it.
 */

/** SITEDIAG_CERT_EXPIRY_WARN_DAYS's default: two weeks leaves time to renew by hand when automation failed. */
export const DEFAULT_CERT_EXPIRY_WARN_DAYS = 14;

const DAY_MS = 86_400_000;

/** One certificate under the threshold. */
export interface ExpiringCertificate {
  /** 0 for the leaf, else its place in the chain (1: the leaf's issuer). */
  readonly position: number;
  readonly subject: string;
  readonly validTo: string;
  readonly daysRemaining: number;
  readonly fingerprintSha256: string;
}

/** The certificates of one handshake with fewer than `thresholdDays` whole days left (and not yet expired). */
export function expiringCertificates(
  tls: Pick<TlsDetail, "certificate" | "chain"> | null,
  thresholdDays: number,
  now: number,
): ExpiringCertificate[] {
  if (tls === null) return [];
  // The chain's first certificate is the leaf; without details the leaf record alone.
  const certificates = tls.chain.length > 0 ? tls.chain : tls.certificate === null ? [] : [tls.certificate];
  const found: ExpiringCertificate[] = [];
  certificates.forEach((certificate, position) => {
    const left = Date.parse(certificate.validTo) - now;
    if (!Number.isFinite(left) || left <= 0) return;
    const daysRemaining = Math.floor(left / DAY_MS);
    if (daysRemaining >= thresholdDays) return;
    found.push({
      position,
      subject: certificate.subject,
      validTo: certificate.validTo,
      daysRemaining,
      fingerprintSha256: certificate.fingerprintSha256,
    });
  });
  return found;
}

/** The sentence of the warning: which certificate, of which URL, and when. */
export function expiryMessage(url: string, expiring: ExpiringCertificate): string {
  const which = expiring.position === 0 ? "The certificate" : `Chain certificate ${expiring.position} (above the leaf)`;
  const name = expiring.subject === "" ? "" : ` ${JSON.stringify(expiring.subject)}`;
  const days = expiring.daysRemaining === 1 ? "1 day" : `${expiring.daysRemaining} days`;
  return `${which}${name} of ${url} expires in ${days}, on ${expiring.validTo.slice(0, 10)}`;
}

/** Remembers the certificates already warned of in one diagnostic, so a chain on one site warns once. */
export function expiryWatch(
  thresholdDays: number,
): (
  url: string,
  tls: Pick<TlsDetail, "certificate" | "chain"> | null,
  now: number,
) => { readonly expiring: ExpiringCertificate; readonly message: string }[] {
  const warned = new Set<string>();
  return (url, tls, now) =>
    expiringCertificates(tls, thresholdDays, now)
      .filter((expiring) => {
        const key = expiring.fingerprintSha256 === "" ? `${expiring.subject}\n${expiring.validTo}` : expiring.fingerprintSha256;
        if (warned.has(key)) return false;
        warned.add(key);
        return true;
      })
      .map((expiring) => ({ expiring, message: expiryMessage(url, expiring) }));
}

/** A warning of is-site-down's details: `request` is the index in details.requests. */
export interface CertificateWarning {
  readonly code: "certificate_expires_soon";
  readonly message: string;
  readonly request: number;
}

/**
 * The expiry warnings of a diagnostic's requests (details), for is-site-down's
 * `details.warnings`. Total: any records give a list, each certificate once.
 */
export function certificateWarnings(
  requests: readonly RequestRecord[],
  thresholdDays: number,
  now: number = Date.now(),
): CertificateWarning[] {
  const watch = expiryWatch(thresholdDays);
  return requests.flatMap((record, request) =>
    watch(record.url, record.tls, now).map(({ message }) => ({ code: "certificate_expires_soon" as const, message, request })),
  );
}
