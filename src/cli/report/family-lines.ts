import type { DiagnosticDetails, FamilyComparison, RequestRecord } from "../../diagnostics/diagnostic-details.js";
import { answerCell, formatMs } from "./request-lines.js";
import { type Paint, textTable } from "./terminal-text.js";

const FAMILY_NAMES = { 4: "IPv4", 6: "IPv6" } as const;

/**
 * The first request over both IP families, when details compared them: the
 * family the diagnostic went over (its first request, `picked`) and the
 * other one, each with its address, answer, time and leaf certificate. The
 * warnings the comparison called for are listed once, with the report's
 * other warnings (a check's evidence warnings, a trace's warnings).
 *
 *   both IP families
 *     IPv6  ::1        200           12.3 ms  SHA-256 AB:CD:…:EF  the check's request
 *     IPv4  127.0.0.1  503            4.1 ms  SHA-256 AB:CD:…:EF
 */
export function familyLines(
  details: DiagnosticDetails | undefined,
  picked: RequestRecord | undefined,
  forCheck: boolean,
  paint: Paint,
): string {
  const families = details?.families ?? null;
  if (families === null) return "";
  const rows = [
    familyRow(families.pickedFamily, picked ?? null, paint, paint.dim(forCheck ? "the check's request" : "the trace's hop 1")),
    families.request === null ? refusedRow(families, paint) : familyRow(families.otherFamily, families.request, paint, ""),
  ];
  return `\n${paint.dim("both IP families")}\n${textTable(rows)}`;
}

function familyRow(family: 4 | 6, request: RequestRecord | null, paint: Paint, note: string): string[] {
  if (request === null) return [FAMILY_NAMES[family], "-", "-", "", "", note];
  const leaf = request.tls?.certificate?.fingerprintSha256;
  return [
    FAMILY_NAMES[family],
    request.remoteAddress ?? "-",
    answerCell(request, paint),
    formatMs(request.timings.totalMs),
    leaf === undefined ? "" : `SHA-256 ${shortPrint(leaf)}`,
    note,
  ];
}

function refusedRow(families: FamilyComparison, paint: Paint): string[] {
  return [FAMILY_NAMES[families.otherFamily], "-", paint.bad(`not sent: ${families.refusal?.reason ?? "refused"}`), "", "", ""];
}

/** Enough of a colon-separated fingerprint to tell two apart: its first and last three bytes. */
function shortPrint(fingerprint: string): string {
  return fingerprint.length <= 23 ? fingerprint : `${fingerprint.slice(0, 8)}…${fingerprint.slice(-8)}`;
}
