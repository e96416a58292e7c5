import { type TraceWarning, traceWarning } from "../diagnostics/redirect-trace-result.js";
import type { Registration } from "./registration-lookup.js";

/** SITEDIAG_DOMAIN_EXPIRY_WARN_DAYS's default: a month leaves time for a renewal that needs a person (a card expired, a registrar's mail unread). */
export const DEFAULT_DOMAIN_EXPIRY_WARN_DAYS = 30;

const DAY_MS = 86_400_000;

/**
 * What a registration calls for: domain_on_hold (problem: clientHold or
 * serverHold keeps the domain out of DNS), domain_expired (problem: the
 * expiration date has passed), domain_expires_soon (warning: fewer whole
 * days left than `warnDays`; 0 never warns). An unknown registration calls
 * for nothing: a registry we could not read is not the site's problem.
 */
export function registrationWarnings(registration: Registration | null, warnDays: number, now: number = Date.now()): TraceWarning[] {
  if (registration === null || registration.state !== "found") return [];
  const warnings: TraceWarning[] = [];
  const { domain } = registration;
  if (registration.suspended) {
    warnings.push(
      traceWarning(
        "domain_on_hold",
        `The domain ${domain} is on hold (${registration.status.join(", ")}): its registry keeps it out of DNS`,
      ),
    );
  }
  const expires = registration.expires === null ? Number.NaN : Date.parse(registration.expires);
  if (Number.isFinite(expires)) {
    const date = registration.expires?.slice(0, 10) ?? "";
    if (expires <= now) warnings.push(traceWarning("domain_expired", `The registration of ${domain} expired on ${date}`));
    else {
      const days = Math.floor((expires - now) / DAY_MS);
      if (warnDays > 0 && days < warnDays)
        warnings.push(
          traceWarning("domain_expires_soon", `The registration of ${domain} expires on ${date}, in ${days} day${days === 1 ? "" : "s"}`),
        );
    }
  }
  return warnings;
}
