import type { EvidenceWarning } from "../../diagnostics/diagnostic-details.js";
import { type Paint, textTable } from "./terminal-text.js";

// A check's evidence warnings (details.warnings) in the CLI, laid out as a
// trace's warnings are: is-site-down has no warnings list in the contract,
// so this is the one place a person reads them, each once.

type Severity = EvidenceWarning["severity"];

/** How each severity's word is painted, in a check's warnings and a trace's alike. */
export const SEVERITY_PAINT: Readonly<Record<Severity, (paint: Paint) => (text: string) => string>> = {
  problem: (paint) => paint.bad,
  warning: (paint) => paint.warn,
  info: (paint) => paint.dim,
};

/** The warnings of severity problem: on an up check, the verdict line counts them and the summary names them. */
export function problemWarnings(warnings: readonly EvidenceWarning[]): readonly EvidenceWarning[] {
  return warnings.filter((warning) => warning.severity === "problem");
}

/**
 * Every warning of a check's details, one row each: its severity, the
 * request it concerns (the request table's numbering) or the check as a
 * whole, its code and its message.
 *
 *   warnings
 *     problem  request 1  certificate_revoked  The certificate of https://site/ is revoked since 2026-01-01 (keyCompromise)
 *     warning  request 1  families_disagree    GET https://site/ answers 200 over IPv6 (::1) but 503 over IPv4 (127.0.0.1)
 */
export function evidenceWarningLines(warnings: readonly EvidenceWarning[], paint: Paint): string {
  if (warnings.length === 0) return "";
  const rows = warnings.map((warning) => [
    SEVERITY_PAINT[warning.severity](paint)(warning.severity),
    warning.hop === null ? "check" : `request ${warning.hop}`,
    paint.dim(warning.code),
    warning.message,
  ]);
  return `\n${paint.dim("warnings")}\n${textTable(rows)}`;
}
