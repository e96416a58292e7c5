import type { Details, Registration } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type Child, h, table } from "./dom.js";

/** Why a registration is unknown, in words. */
const UNKNOWN_WORDS: Readonly<Record<string, string>> = {
  no_service: "no RDAP service for its top-level domain",
  refused: "the RDAP service's address is not allowed",
  timeout: "the registry did not answer in time",
  too_large: "the registry's answer was too large",
  http_status: "the registry answered with an error",
  invalid_answer: "the registry's answer was not RDAP",
  failed: "the lookup failed",
  unfinished: "the registry had not answered when the check ended",
};

/**
 * The first host's domain registration (details.registration, RDAP) as a
 * compact table under the evidence: domain, registrar, registered, expires
 * (in days), status. Every text is the service's bounded, escaped copy of the
 * registry's, set as text. Nothing for a diagnostic without one.
 */
export function renderRegistration(details: Details): HTMLElement | null {
  const registration = details.registration;
  if (registration === undefined) return null;
  const row =
    registration.state === "found"
      ? [
          h("span", { class: "url" }, registration.domain),
          registration.registrar ?? "–",
          day(registration.created),
          expiresCell(
            registration,
            details.warnings.some(({ code }) => code === "domain_expires_soon"),
          ),
          statusCell(registration),
        ]
      : [
          h("span", { class: "url" }, registration.domain),
          h("span", { class: "note" }, `unknown: ${UNKNOWN_WORDS[registration.unknownReason ?? ""] ?? "not known"}`),
          "–",
          "–",
          "–",
        ];
  return h(
    "section",
    { class: "registration", "aria-labelledby": "registration-heading" },
    h("h3", { id: "registration-heading" }, "Domain registration"),
    table(
      "The first host's domain as its registry's RDAP service gave it",
      ["Domain", "Registrar", "Registered", "Expires", "Status"],
      [row],
      "registration-table",
    ),
  );
}

function day(iso: string | undefined): string {
  return iso === undefined ? "–" : iso.slice(0, 10);
}

/** The date and how far off it is; amber when the service warned (its threshold, SITEDIAG_DOMAIN_EXPIRY_WARN_DAYS), red when past. */
function expiresCell(registration: Registration, warned: boolean): Child {
  if (registration.expires === undefined) return "–";
  const days = Math.floor((Date.parse(registration.expires) - Date.now()) / 86_400_000);
  if (!Number.isFinite(days)) return day(registration.expires);
  if (days < 0) return h("span", {}, day(registration.expires), " ", h("span", { class: "badge bad" }, "expired"));
  return h(
    "span",
    {},
    day(registration.expires),
    " ",
    h("span", { class: `badge ${warned ? "warn" : "ok"}` }, `in ${days} day${days === 1 ? "" : "s"}`),
  );
}

function statusCell(registration: Registration): Child {
  const status = registration.status.length === 0 ? "–" : registration.status.join(", ");
  return registration.suspended ? h("span", { class: "badge bad" }, `on hold: ${status}`) : status;
}
