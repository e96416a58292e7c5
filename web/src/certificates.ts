import type { RequestDetail } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { h, table } from "./dom.js";
import { formatDate, hostOf } from "./format.js";

/** Within this many days of expiry a certificate is flagged. */
const EXPIRY_WARNING_DAYS = 30;

/** The leaf certificate of each HTTPS request: who it names, who issued it, when it expires, and a badge when it needs attention. */
export function renderCertificates(requests: readonly RequestDetail[]): HTMLElement | null {
  const rows = requests.flatMap((request, index) => {
    const tls = request.tls;
    const certificate = tls?.certificate;
    if (tls === undefined || certificate === undefined) return [];
    const validTo = new Date(certificate.validTo);
    return [
      [
        index + 1,
        hostOf(request.url),
        certificate.subject,
        certificate.issuer,
        h("span", {}, formatDate(validTo), h("br"), h("small", {}, daysText(certificate.daysRemaining))),
        badgeOf(certificate.daysRemaining, tls.verifyError),
        [tls.protocol, tls.alpn].filter((part) => part !== undefined).join(", ") || "–",
      ],
    ];
  });
  if (rows.length === 0) return null;
  return h(
    "section",
    { class: "certificates", "aria-labelledby": "certificates-heading" },
    h("h3", { id: "certificates-heading" }, "Certificates"),
    table("The certificate each HTTPS request was shown", ["#", "Host", "Subject", "Issuer", "Expires", "State", "TLS"], rows, "certificate-table"),
  );
}

function daysText(days: number): string {
  if (days < 0) return `expired ${-days} day${days === -1 ? "" : "s"} ago`;
  return `in ${days} day${days === 1 ? "" : "s"}`;
}

function badgeOf(daysRemaining: number, verifyError: string | undefined): HTMLElement {
  if (verifyError !== undefined) return h("span", { class: "badge bad" }, `verification failed: ${verifyError}`);
  if (daysRemaining < 0) return h("span", { class: "badge bad" }, "expired");
  if (daysRemaining <= EXPIRY_WARNING_DAYS) return h("span", { class: "badge warn" }, `expires within ${EXPIRY_WARNING_DAYS} days`);
  return h("span", { class: "badge ok" }, "valid");
}
