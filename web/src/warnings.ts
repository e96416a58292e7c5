import { type Details, type TraceWarning, WarningSeverity } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { h } from "./dom.js";

// Warnings as the page shows them, a trace's and a check's evidence warnings
// alike: one list item each, its severity in word and colour, its code, its
// message and what it concerns. Each warning is listed once per view: the
// parts of details (both IP families) summarise, they do not repeat it.

/** How each severity is labelled and styled (page.css: .severity-*). */
export const SEVERITY: Readonly<Record<WarningSeverity, { readonly word: string; readonly badge: string }>> = {
  [WarningSeverity.UNSPECIFIED]: { word: "note", badge: "info" },
  [WarningSeverity.INFO]: { word: "info", badge: "info" },
  [WarningSeverity.WARNING]: { word: "warning", badge: "warn" },
  [WarningSeverity.PROBLEM]: { word: "problem", badge: "bad" },
};

/** What a warning's `hop` counts: a trace's chain positions, or a check's requests (both from 1). */
export type WarningPlace = "hop" | "request";

export function warningItem(warning: TraceWarning, place: WarningPlace): HTMLLIElement {
  const severity = SEVERITY[warning.severity];
  return h(
    "li",
    { class: `severity-${severity.word}` },
    h("span", { class: `badge ${severity.badge}` }, severity.word),
    " ",
    h("code", {}, warning.code),
    " ",
    warning.message,
    warning.hop === undefined ? null : h("span", { class: "hop-ref" }, ` (${place} ${warning.hop})`),
  );
}

/** The list, or a note that there is none. */
export function warningList(warnings: readonly TraceWarning[], place: WarningPlace): HTMLElement {
  if (warnings.length === 0) return h("p", { class: "note" }, "No warnings.");
  return h("ul", { class: "warnings" }, ...warnings.map((warning) => warningItem(warning, place)));
}

/** The warnings of severity problem: on a good verdict, the banner turns and names them. */
export function problemsOf(warnings: readonly TraceWarning[]): readonly TraceWarning[] {
  return warnings.filter((warning) => warning.severity === WarningSeverity.PROBLEM);
}

/** "2 problems: a; b", the line a good verdict carries when its warnings hold problems; null when none. */
export function problemLine(problems: readonly TraceWarning[]): HTMLElement | null {
  if (problems.length === 0) return null;
  return h(
    "p",
    { class: "reason problems" },
    `${problems.length} problem${problems.length === 1 ? "" : "s"}: `,
    problems.map((warning) => warning.message).join("; "),
  );
}

/**
 * is-site-down's evidence warnings (details.warnings: the contract has no
 * warnings list for a check), each naming the request it concerns; nothing
 * when the answer carries no details.
 */
export function renderCheckWarnings(details: Details | undefined): HTMLElement | null {
  if (details === undefined) return null;
  return h(
    "section",
    { class: "warnings-section", "aria-labelledby": "warnings-heading" },
    h("h3", { id: "warnings-heading" }, "Warnings"),
    warningList(details.warnings, "request"),
  );
}
