import type { DiagnosticDetails } from "../../diagnostics/diagnostic-details.js";
import { type TlsVersionAttempt, versionName } from "../../diagnostics/tls-version-survey.js";
import { formatMs } from "./request-lines.js";
import { type Paint, textTable } from "./terminal-text.js";

/**
 * The first host's TLS versions, when details tried them: one row per
 * version with whether the server accepted it (its cipher, what it chose in
 * ALPN) or why not. A legacy version accepted is painted as a warning.
 *
 *   TLS versions at 127.0.0.1 (h2 chosen)
 *     TLS 1.3  accepted  TLS_AES_256_GCM_SHA384  h2  1.1 ms
 *     TLS 1.2  accepted  ECDHE-RSA-AES128-GCM-SHA256  h2  0.9 ms
 *     TLS 1.1  refused   ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION
 *     TLS 1.0  refused   ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION
 */
export function tlsVersionLines(details: DiagnosticDetails | undefined, paint: Paint): string {
  const survey = details?.tlsVersions ?? null;
  if (survey === null) return "";
  if (survey.refusal !== null)
    return `\n${paint.dim(`TLS versions at ${survey.address}`)}\n  ${paint.bad(`not sent: ${survey.refusal.reason}`)}\n`;
  const heading = `TLS versions at ${survey.address} (${survey.h2 ? "h2 chosen" : "h2 not chosen"})`;
  return `\n${paint.dim(heading)}\n${textTable(survey.attempts.map((attempt) => versionRow(attempt, paint)))}`;
}

function versionRow(attempt: TlsVersionAttempt, paint: Paint): string[] {
  const name = versionName(attempt.version);
  if (attempt.outcome === "accepted") {
    const legacy = attempt.version === "TLSv1" || attempt.version === "TLSv1.1";
    return [
      name,
      legacy ? paint.warn("accepted") : paint.good("accepted"),
      attempt.cipher ?? "",
      attempt.alpn ?? "",
      attempt.tlsMs === null ? "" : formatMs(attempt.tlsMs),
    ];
  }
  if (attempt.outcome === "not_offered_locally") return [name, paint.dim("not offered by this server's OpenSSL"), "", "", ""];
  return [
    name,
    attempt.outcome === "refused" ? "refused" : paint.bad("failed"),
    attempt.cause ?? attempt.code ?? "",
    attempt.reason ?? "",
    "",
  ];
}
