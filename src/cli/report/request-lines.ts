import type { CertificateRecord, DiagnosticDetails, RequestRecord, TlsRecord } from "../../diagnostics/diagnostic-details.js";
import type { HopTimings } from "../../probe/hop-types.js";
import type { Paint } from "./terminal-text.js";

// What the reports print of the requests a diagnostic made: the cells of a
// request table, the TLS and certificate lines, the summary rows of details.
// Everything here reads `details`: the one record of each request, which the
// API and the page render too (the CLI asks for its report facts).

/** The phase columns every request table shows, in the order they happen. */
export const PHASE_HEADINGS = ["dns", "connect", "tls", "first byte", "total"] as const;

/** What a request came to, in a few words: the status line, or how it failed or why it was not sent. */
export function answerCell(request: RequestRecord, paint: Paint): string {
  const report = request.report;
  if (request.failure !== null) {
    const { failure } = request;
    return paint.bad(`${failure.timedOut ? "timed out" : "failed"} at ${failure.stage} (${report?.cause ?? failure.code})`);
  }
  if (request.status !== null) return paint.status(request.status, `${request.status} ${report?.statusText ?? ""}`);
  return paint.bad(report?.refusal === null || report?.refusal === undefined ? "not sent" : `not sent: ${report.refusal.rule}`);
}

/** The address the request was sent to, when it got that far. */
export function addressCell(request: RequestRecord): string {
  return request.remoteAddress ?? "-";
}

/** The URL requested, with an arrow to where it redirects when it does. */
export function urlCell(url: string, location: string | null, paint: Paint, note = ""): string {
  if (location === null) return url;
  return `${url} ${paint.notice("→")} ${location}${note === "" ? "" : ` ${paint.dim(note)}`}`;
}

/**
 * Milliseconds for people: one decimal under 10 ms, where loopback and LAN
 * timings live, whole numbers above. "-" for a phase that did not happen.
 */
export function formatMs(ms: number | null): string {
  if (ms === null) return "-";
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

/** Phase cells of one request: every phase for a response; for a failure only the time until it was known. */
export function phaseCells(request: RequestRecord | undefined): string[] {
  if (request === undefined) return ["-", "-", "-", "-", "-"];
  if (request.failure !== null) return ["-", "-", "-", "-", formatMs(request.failure.elapsedMs)];
  if (request.status !== null) return timingCells(request.timings, request.connectionReused);
  return ["-", "-", "-", "-", "-"];
}

/** A request over the connection the redirect before it kept says so where its dial would be. */
function timingCells(timings: HopTimings, reused: boolean): string[] {
  return [formatMs(timings.dnsMs), reused ? "reused" : formatMs(timings.connectMs), formatMs(timings.tlsMs), formatMs(timings.firstByteMs), formatMs(timings.totalMs)];
}

/** One line per HTTPS request that was answered: who the certificate names, who issued it, and until when it is valid. */
export function tlsLines(requests: readonly { readonly label: string; readonly request: RequestRecord }[], paint: Paint): string {
  return requests
    .flatMap(({ label, request }) => {
      const tls = request.failure === null && request.status !== null ? request.tls : null;
      return tls === null || tls.certificate === null ? [] : [`  ${paint.dim(`tls ${label}`)}  ${describeTls(tls, tls.certificate)}\n`];
    })
    .join("");
}

function describeTls(tls: TlsRecord, certificate: CertificateRecord): string {
  return `${tls.protocol ?? "unknown"}, subject ${certificate.subjectName || "(none)"}, issuer ${certificate.issuerName || "(none)"}, valid ${day(certificate.validFrom)} to ${day(certificate.validTo)}`;
}

function day(iso: string): string {
  return iso.slice(0, 10);
}

/** Summary rows from `details`: the failure code, a client-side redirect (the proxy's row is the report's, beside the verdict it must agree with). */
export function detailsRows(details: DiagnosticDetails | undefined, paint: Paint): string[][] {
  if (details === undefined) return [];
  const rows: string[][] = [];
  if (details.code !== null) rows.push(["code", paint.bad(details.code)]);
  const redirect = details.clientRedirect;
  if (redirect !== null) {
    const how = redirect.kind === "refresh_header" ? "Refresh header" : "meta refresh";
    rows.push(["client redirect", paint.warn(`${how} to ${redirect.url} after ${redirect.delaySeconds} s (not followed)`)]);
  }
  return rows;
}

/**
 * One line per request that showed a certificate: whom it names, when it
 * expires, and why it failed verification when it did (such a request has
 * no other TLS line: nothing was sent over it). Numbered as the API's list
 * (a report's stopped position, always last, is not in it).
 */
export function certificateLines(details: DiagnosticDetails | undefined, paint: Paint): string {
  if (details === undefined) return "";
  return details.requests
    .filter((request) => request.report?.kind !== "stopped")
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
