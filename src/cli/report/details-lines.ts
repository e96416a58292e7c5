import type { CertificateRecord, DiagnosticDetails } from "../../diagnostics/details-types.js";
import type { Paint } from "./paint.js";

/** Summary rows from `details`: the failure code, the proxy that answered, a client-side redirect. */
export function detailsRows(details: DiagnosticDetails | undefined, paint: Paint): string[][] {
  if (details === undefined) return [];
  const rows: string[][] = [];
  if (details.code !== null) rows.push(["code", paint.bad(details.code)]);
  if (details.proxy !== null) {
    const meaning = PROXY_MEANINGS[details.proxy.kind];
    rows.push(["provider", `${details.proxy.provider}: ${details.proxy.kind === "unknown" ? meaning : paint.warn(meaning)}`]);
  }
  const redirect = details.clientRedirect;
  if (redirect !== null) {
    const how = redirect.kind === "refresh_header" ? "Refresh header" : "meta refresh";
    rows.push(["client redirect", paint.warn(`${how} to ${redirect.url} after ${redirect.delaySeconds} s (not followed)`)]);
  }
  return rows;
}

const PROXY_MEANINGS = {
  challenge: "a challenge (a browser check, not an outage)",
  block: "a block by the proxy's own rules",
  origin_error: "the origin failed behind the proxy",
  unknown: "answered through it",
} as const;

/**
 * One line per request that showed a certificate: whom it names, when it
 * expires, and why it failed verification when it did (such a request has
 * no other TLS line: nothing was sent over it).
 */
export function certificateLines(details: DiagnosticDetails | undefined, paint: Paint): string {
  if (details === undefined) return "";
  return details.requests
    .flatMap((request, index) => {
      const certificate = request.tls?.certificate;
      if (certificate === undefined || certificate === null) return [];
      const verdict = request.tls?.verifyError === null || request.tls?.verifyError === undefined ? "" : `, ${paint.bad(`not trusted: ${request.tls.verifyError}`)}`;
      return [`  ${paint.dim(`cert #${index + 1}`)}  ${certificate.subject || "(no CN)"}, ${expiry(certificate, paint)}, chain of ${certificate.chainLength}${verdict}\n`];
    })
    .join("");
}

function expiry(certificate: CertificateRecord, paint: Paint): string {
  const day = certificate.validTo.slice(0, 10);
  const days = certificate.daysRemaining;
  if (days < 0) return paint.bad(`expired ${day} (${-days} days ago)`);
  const text = `expires ${day} (in ${days} days)`;
  // Three weeks: the usual warning threshold of certificate monitors.
  return days < 21 ? paint.warn(text) : text;
}
