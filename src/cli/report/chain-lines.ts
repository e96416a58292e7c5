import type { ChainCertificateRecord, TlsRecord } from "../../diagnostics/diagnostic-details.js";
import type { Paint } from "./terminal-text.js";

/**
 * The chain under a certificate line (details): one line per certificate as
 * Node links it, leaf first, and the link that failed named in words:
 *
 *       0  localhost  ec 256 (prime256v1), sha256WithRSAEncryption, expires 2027-11-26 (in 365 days)
 *       1  R11  rsa 2048, sha256WithRSAEncryption, expired 2021-01-01 (2155 days ago)  <- expired
 *       … 3 more
 *
 * Issuing order, not the order the server sent (docs/probe.md). "" when
 * the record has no chain (a request without details).
 */
export function chainLines(tls: TlsRecord, paint: Paint): string {
  if (tls.chain.length === 0) return "";
  const verification = tls.verification;
  const lines = tls.chain.map((certificate, index) => {
    const failed = verification !== null && !verification.verified && verification.failedAt === index;
    const mark = failed ? `  ${paint.bad(`<- ${verification.reason ?? "failed"}`)}` : "";
    return `      ${paint.dim(String(index))}  ${describe(certificate, paint)}${mark}\n`;
  });
  const more = verification !== null && verification.more > 0 ? [`      ${paint.dim(`… ${verification.more} more`)}\n`] : [];
  // A failure no certificate can be named for still says why, in words, under the chain.
  const unplaced =
    verification !== null && !verification.verified && (verification.failedAt === null || verification.failedAt >= tls.chain.length)
      ? [
          `      ${paint.bad(`chain not trusted: ${verification.reason ?? "failed"}${verification.failedAt === null ? "" : ` at certificate ${verification.failedAt}`}`)}\n`,
        ]
      : [];
  return [...lines, ...more, ...unplaced].join("");
}

function describe(certificate: ChainCertificateRecord, paint: Paint): string {
  const name = certificate.subject || certificate.subjectName || "(no subject)";
  const root = certificate.selfIssued ? " (self-issued)" : "";
  return `${name}${root}  ${keyText(certificate)}, ${certificate.signatureAlgorithm || "signature unreadable"}, ${validity(certificate, paint)}`;
}

function keyText(certificate: ChainCertificateRecord): string {
  if (certificate.keyType === "") return "key unreadable";
  const size = certificate.keySize > 0 ? ` ${certificate.keySize}` : "";
  const curve = certificate.keyCurve === "" ? "" : ` (${certificate.keyCurve})`;
  return `${certificate.keyType}${size}${curve}`;
}

function validity(certificate: ChainCertificateRecord, paint: Paint): string {
  if (certificate.validTo === "") return paint.bad("expiry unreadable");
  const day = certificate.validTo.slice(0, 10);
  const days = certificate.daysRemaining;
  if (days < 0) return paint.bad(`expired ${day} (${-days} days ago)`);
  if (Date.parse(certificate.validFrom) > Date.now()) return paint.bad(`not valid before ${certificate.validFrom.slice(0, 10)}`);
  return `expires ${day} (in ${days} days)`;
}
