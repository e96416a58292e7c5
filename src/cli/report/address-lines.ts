import type { AddressAttempt, AddressSurvey } from "../../diagnostics/address-survey.js";
import type { DiagnosticDetails } from "../../diagnostics/diagnostic-details.js";
import { formatMs } from "./request-lines.js";
import { type Paint, textTable } from "./terminal-text.js";

/**
 * The first request at every address of its host, when details tried them:
 * one row per address with its answer (or failure and code), its connect,
 * TLS and first-byte times and its leaf certificate, the addresses not tried
 * counted below. The warnings they called for are listed once, with the
 * report's other warnings.
 *
 *   every address
 *     127.0.0.1  IPv4  200                              0.3 ms         1.2 ms  SHA-256 AB:CD:…  the first request
 *     127.0.0.3  IPv4  failed at connect (connect_refused)
 *     127.0.0.4  IPv4  200                              0.2 ms         0.9 ms
 */
export function addressLines(details: DiagnosticDetails | undefined, paint: Paint): string {
  const survey = details?.addresses ?? null;
  if (survey === null) return "";
  const rows = survey.attempts.map((attempt) => addressRow(attempt, paint));
  return `\n${paint.dim("every address")}\n${textTable(rows)}${untriedLine(survey, paint)}`;
}

function addressRow(attempt: AddressAttempt, paint: Paint): string[] {
  const leaf = attempt.certificateSha256;
  return [
    attempt.address,
    attempt.family === 6 ? "IPv6" : "IPv4",
    outcomeCell(attempt, paint),
    attempt.connectMs === null ? "" : `connect ${formatMs(attempt.connectMs)}`,
    attempt.tlsMs === null ? "" : `tls ${formatMs(attempt.tlsMs)}`,
    attempt.firstByteMs === null ? "" : `first byte ${formatMs(attempt.firstByteMs)}`,
    leaf === null ? "" : `SHA-256 ${shortPrint(leaf)}`,
    attempt.firstRequest ? paint.dim("the first request") : "",
  ];
}

function outcomeCell(attempt: AddressAttempt, paint: Paint): string {
  if (attempt.outcome === "answered" && attempt.status !== null) return paint.status(attempt.status, String(attempt.status));
  if (attempt.outcome === "refused") return paint.bad(`not sent: ${attempt.reason ?? "refused"}`);
  return paint.bad(`failed at ${attempt.failedStage ?? "?"} (${attempt.code ?? "?"})`);
}

function untriedLine(survey: AddressSurvey, paint: Paint): string {
  return survey.untried === 0
    ? ""
    : `  ${paint.dim(`${String(survey.untried)} more address${survey.untried === 1 ? "" : "es"} not tried (at most 8 of each family)`)}\n`;
}

/** Enough of a colon-separated fingerprint to tell two apart: its first and last three bytes. */
function shortPrint(fingerprint: string): string {
  return fingerprint.length <= 23 ? fingerprint : `${fingerprint.slice(0, 8)}…${fingerprint.slice(-8)}`;
}
