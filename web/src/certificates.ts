import type { Certificate, RequestDetail, TlsDetail } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { causeInfo, STAGE_FALLBACK_CODES } from "../../src/shared/failures.js";
import { h, table } from "./dom.js";
import { formatDate, hostOf } from "./format.js";
import { renderChain } from "./certificate-chain.js";

/** Within this many days of expiry a certificate is flagged. */
const EXPIRY_WARNING_DAYS = 30;

interface Shown {
  readonly host: string;
  readonly tls: TlsDetail;
  readonly certificate: Certificate;
  /** The requests (numbered from 1) that were shown this certificate by this host. */
  readonly requests: number[];
}

/**
 * The leaf certificate each HTTPS request was shown: who it names, who issued
 * it, when it expires, and a badge when it needs attention. A host showing
 * the same certificate to several requests (a chain on one site) is one row
 * naming those requests.
 */
export function renderCertificates(requests: readonly RequestDetail[]): HTMLElement | null {
  const shown: Shown[] = [];
  requests.forEach((request, index) => {
    const tls = request.tls;
    const certificate = tls?.certificate;
    if (tls === undefined || certificate === undefined) return;
    const host = hostOf(request.url);
    const same = shown.find(
      (entry) =>
        entry.host === host &&
        entry.certificate.fingerprintSha256 === certificate.fingerprintSha256 &&
        entry.tls.verifyError === tls.verifyError,
    );
    if (same !== undefined) same.requests.push(index + 1);
    else shown.push({ host, tls, certificate, requests: [index + 1] });
  });
  if (shown.length === 0) return null;
  const rows = shown.map(({ host, tls, certificate, requests: numbers }) => [
    numbers.join(", "),
    host,
    certificate.subject,
    certificate.issuer,
    h("span", {}, formatDate(new Date(certificate.validTo)), h("br"), h("small", {}, daysText(certificate.daysRemaining))),
    badgeOf(certificate.daysRemaining, tls.verifyError),
    [tls.protocol, tls.alpn].filter((part) => part !== undefined).join(", ") || "–",
  ]);
  return h(
    "section",
    { class: "certificates", "aria-labelledby": "certificates-heading" },
    h("h3", { id: "certificates-heading" }, "Certificates"),
    table(
      "The certificate each HTTPS request was shown",
      ["Requests", "Host", "Subject", "Issuer", "Expires", "State", "TLS"],
      rows,
      "certificate-table",
    ),
    ...shown.map(({ host, tls, requests: numbers }) => renderChain(tls, numbers, host)),
  );
}

function daysText(days: number): string {
  if (days < 0) return `expired ${-days} day${days === -1 ? "" : "s"} ago`;
  return `in ${days} day${days === 1 ? "" : "s"}`;
}

function badgeOf(daysRemaining: number, verifyError: string | undefined): HTMLElement {
  if (verifyError !== undefined) {
    // In words, from the table the probe's failures are worded by; the code (OpenSSL's or Node's) on hover.
    const cause = causeInfo(verifyError, "tls");
    const known = cause.code !== STAGE_FALLBACK_CODES.tls;
    return h(
      "span",
      { class: "badge bad", title: known ? `${verifyError} (${cause.code})` : verifyError },
      known ? cause.reason : "Not trusted by this service",
    );
  }
  if (daysRemaining < 0) return h("span", { class: "badge bad" }, "expired");
  if (daysRemaining <= EXPIRY_WARNING_DAYS) return h("span", { class: "badge warn" }, `expires within ${EXPIRY_WARNING_DAYS} days`);
  return h("span", { class: "badge ok" }, "valid");
}
