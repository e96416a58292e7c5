import type { DiagnosticDetails } from "../../diagnostics/diagnostic-details.js";
import type { UnknownReason } from "../../registration/registration-lookup.js";
import type { Paint } from "./terminal-text.js";

/**
 * The first host's domain registration (details.registration) as one line,
 * under the dns lines:
 *
 *     domain  example.test: registrar Example Registrar, Inc.; registered 2001-02-03; expires 2026-12-09; client transfer prohibited
 *     domain  example.test: registration unknown (the registry did not answer in time)
 *
 * Nothing for a diagnostic with none (an IP-address host, no details). The
 * texts are the service's bounded, escaped copies of the registry's.
 */
export function registrationLines(details: DiagnosticDetails | undefined, paint: Paint): string {
  const registration = details?.registration;
  if (registration === undefined || registration === null) return "";
  const head = `  ${paint.dim("domain")}  ${registration.domain}: `;
  if (registration.state === "unknown")
    return `${head}${paint.dim(`registration unknown (${UNKNOWN_WORDS[registration.unknownReason]})`)}\n`;
  const parts = [
    registration.registrar === null ? null : `registrar ${registration.registrar}`,
    registration.created === null ? null : `registered ${registration.created.slice(0, 10)}`,
    registration.expires === null ? null : `expires ${registration.expires.slice(0, 10)}`,
    registration.suspended
      ? paint.bad(`on hold: ${registration.status.join(", ")}`)
      : registration.status.length === 0
        ? null
        : registration.status.join(", "),
  ].filter((part): part is string => part !== null);
  return `${head}${parts.length === 0 ? "registered, nothing more said" : parts.join("; ")}\n`;
}

const UNKNOWN_WORDS: Readonly<Record<UnknownReason, string>> = {
  no_service: "no RDAP service for its top-level domain",
  refused: "the RDAP service's address is not allowed",
  timeout: "the registry did not answer in time",
  too_large: "the registry's answer was over 64 KiB",
  http_status: "the registry answered with an error status",
  invalid_answer: "the registry's answer was not RDAP",
  failed: "the lookup failed",
  unfinished: "the registry had not answered when the check ended",
};
