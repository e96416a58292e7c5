import type { DiagnosticDetails } from "../diagnostics/diagnostic-details.js";
import type { Registration } from "./registration-lookup.js";
import { DEFAULT_DOMAIN_EXPIRY_WARN_DAYS, registrationWarnings } from "./registration-warnings.js";

/** The details with the first host's registration and what it calls for (registration-warnings.ts) added to their warnings. */
export function withRegistration(
  details: DiagnosticDetails,
  registration: Registration | null,
  warnDays: number = DEFAULT_DOMAIN_EXPIRY_WARN_DAYS,
): DiagnosticDetails {
  // No registrable domain (an IP-address host): the details keep the shape they had.
  if (registration === null) return details;
  const warnings = registrationWarnings(registration, warnDays);
  return Object.assign({}, details, { registration, warnings: [...details.warnings, ...warnings] });
}
