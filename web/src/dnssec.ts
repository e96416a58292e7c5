import type { Details, NameResolution } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type Child, h, table } from "./dom.js";

/** The badge each state wears: only a bogus answer is bad; an unsigned one is no fault of the site's. */
const STATES: Readonly<Record<string, { readonly text: string; readonly tone: string }>> = {
  validated: { text: "validated", tone: "ok" },
  unvalidated: { text: "not validated", tone: "info" },
  bogus: { text: "bogus", tone: "bad" },
};

/**
 * The DNSSEC reading of the first host (details.resolutions[].dnssec and
 * extendedErrors) as a compact table under the name resolution: the name,
 * what the resolver said, and each Extended DNS Error with its text (the
 * service's bounded, escaped copy, set as text). Nothing for a diagnostic
 * whose lookups were not read.
 */
export function renderDnssec(details: Details): HTMLElement | null {
  const read = details.resolutions.filter((resolution) => resolution.dnssec in STATES || resolution.extendedErrors.length > 0);
  if (read.length === 0) return null;
  const rows = read.map((resolution) => [h("span", { class: "url" }, resolution.name), stateBadge(resolution), errorsCell(resolution)]);
  return h(
    "section",
    { class: "dnssec", "aria-labelledby": "dnssec-heading" },
    h("h3", { id: "dnssec-heading" }, "DNSSEC"),
    table(
      "What the resolver said of the first host's DNSSEC, and the Extended DNS Errors it gave",
      ["Name", "Resolver says", "Extended DNS Errors"],
      rows,
      "dnssec-table",
    ),
  );
}

function stateBadge(resolution: NameResolution): HTMLElement {
  const state = STATES[resolution.dnssec] ?? { text: "unknown", tone: "info" };
  return h("span", { class: `badge ${state.tone}` }, state.text);
}

function errorsCell(resolution: NameResolution): Child {
  if (resolution.extendedErrors.length === 0) return "–";
  return h(
    "span",
    { class: "extended-errors" },
    ...resolution.extendedErrors.map(({ infoCode, name, extraText }) =>
      h(
        "span",
        { class: "extended-error" },
        `${infoCode}${name === "" ? "" : ` ${name}`}`,
        extraText === "" ? null : h("small", {}, ` “${extraText}”`),
      ),
    ),
  );
}
