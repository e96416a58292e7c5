import { certificateWarnings, DEFAULT_CERT_EXPIRY_WARN_DAYS } from "./certificate-expiry.js";
import type { EvidenceWarning, RequestRecord } from "./diagnostic-details.js";
import { siteCheckRevocationWarning } from "./revocation-warnings.js";
import { TRACE_WARNING_SEVERITY } from "./redirect-trace-result.js";

// is-site-down has no warnings list in the contract: what its evidence calls
// for goes in details.warnings, with the code, severity and words
// redirect-check gives the same finding, each naming the request (1: the
// first) it concerns. The families' warnings join them once that request is
// back (family-comparison.ts).

/**
 * The certificate warnings of a check's requests: certificate_expires_soon
 * for each certificate under the threshold (once each), certificate_revoked
 * for a connection whose stapled answer says its leaf is revoked (a reused
 * connection was judged with the request that opened it). Total.
 */
export function siteCheckWarnings(
  requests: readonly RequestRecord[],
  thresholdDays: number | undefined,
  now: number = Date.now(),
): EvidenceWarning[] {
  const expiring: EvidenceWarning[] = certificateWarnings(requests, thresholdDays ?? DEFAULT_CERT_EXPIRY_WARN_DAYS, now).map((warning) => ({
    code: warning.code,
    message: warning.message,
    hop: warning.request + 1,
    severity: TRACE_WARNING_SEVERITY.certificate_expires_soon,
  }));
  const revoked: EvidenceWarning[] = requests.flatMap((record, index) => {
    if (record.connectionReused) return [];
    const warning = siteCheckRevocationWarning(record.url, record.tls);
    return warning === null ? [] : [{ code: warning.code, message: warning.message, hop: index + 1, severity: warning.severity }];
  });
  return [...expiring, ...revoked];
}
