import type { RequestRecord } from "../../diagnostics/diagnostic-details.js";
import type { StapledOcsp } from "../../probe/connect/stapled-ocsp.js";
import type { Paint } from "./terminal-text.js";

/**
 * One line per distinct stapled OCSP reading of the HTTPS requests, beside
 * the certificate lines and naming the table's rows the same way:
 *
 *     ocsp  revoked 2026-01-01 (keyCompromise), for this certificate, signature verified, next update 2026-11-27  (hops 1, 2)
 *
 * Every word is ours (statuses, dates, reason names): nothing of the
 * target's text is printed. `requests` are the table's rows, numbered from 1.
 */
export function revocationLines(requests: readonly RequestRecord[], noun: string, paint: Paint): string {
  const shown: { readonly text: string; readonly rows: number[] }[] = [];
  requests.forEach((request, index) => {
    if (request.tls === null) return;
    const text = describeStaple(request.tls.ocsp, paint);
    const same = shown.find((entry) => entry.text === text);
    if (same === undefined) shown.push({ text, rows: [index + 1] });
    else same.rows.push(index + 1);
  });
  return shown
    .map(
      ({ text, rows }) => `  ${paint.dim("ocsp")}  ${text}  ${paint.dim(`(${noun}${rows.length === 1 ? "" : "s"} ${rows.join(", ")})`)}\n`,
    )
    .join("");
}

function describeStaple(ocsp: StapledOcsp, paint: Paint): string {
  if (ocsp.status === "none") return paint.dim("nothing stapled (no OCSP responder is asked)");
  if (ocsp.status === "invalid") return paint.warn(`invalid staple: ${ocsp.invalidReason ?? "unreadable"}`);
  const parts = [
    statusText(ocsp, paint),
    ocsp.forLeaf ? "for this certificate" : paint.warn("for another certificate"),
    signatureText(ocsp, paint),
  ];
  const next = ocsp.nextUpdate?.slice(0, 10);
  if (next !== undefined) parts.push(ocsp.stale ? paint.warn(`stale: next update was ${next}`) : `next update ${next}`);
  return parts.join(", ");
}

function statusText(ocsp: StapledOcsp, paint: Paint): string {
  if (ocsp.status === "good") return paint.good("good");
  if (ocsp.status === "unknown") return paint.warn("unknown to its responder");
  const since = ocsp.revokedAt === null ? "" : ` ${ocsp.revokedAt.slice(0, 10)}`;
  const reason = ocsp.revocationReason === null ? "" : ` (${ocsp.revocationReason})`;
  return paint.bad(`revoked${since}${reason}`);
}

function signatureText(ocsp: StapledOcsp, paint: Paint): string {
  if (ocsp.signature === "verified") return "signature verified";
  if (ocsp.signature === "failed") return paint.bad(`signature fails (${ocsp.signatureNote ?? "not the issuer's"})`);
  return paint.warn(`signature not checked (${ocsp.signatureNote ?? "no issuer"})`);
}
