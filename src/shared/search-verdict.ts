import type { TraceWarning } from "../../gen/sitediag/v1/diagnostics_pb.js";

// What the search signals (issue 39) do to a batch row, beside the rule of
// src/shared/batch-verdict.ts. A migration audit asks whether each old URL's rank
// survives the move: a final page that asks not to be indexed, that reads as
// "not found", or a deep URL sent to the home page loses it (Google treats
// the last two as soft 404s), so they FAIL the row; a canonical naming
// another URL may be intended (the new site's own choice), so it passes the
// row with a word of it in its reason.

/** The codes that fail a row; redirect_to_home not when the row expected that very final URL. */
export const FAILING_SEARCH_CODES: ReadonlySet<string> = new Set(["noindex", "soft_404_suspected", "redirect_to_home"]);
/** The codes a passing row names in its reason. */
export const NOTED_SEARCH_CODES: ReadonlySet<string> = new Set(["canonical_elsewhere"]);

/** The first warning that fails the row, or undefined; `expectedMatched`: the row named its final URL and the chain ended there. */
export function failingSearchWarning(warnings: readonly TraceWarning[], expectedMatched: boolean): TraceWarning | undefined {
  return warnings.find((warning) => FAILING_SEARCH_CODES.has(warning.code) && !(expectedMatched && warning.code === "redirect_to_home"));
}

/** The messages a passing row adds to its reason, joined; "" when none. */
export function searchNotes(warnings: readonly TraceWarning[]): string {
  return warnings
    .filter((warning) => NOTED_SEARCH_CODES.has(warning.code))
    .map((warning) => warning.message)
    .join("; ");
}
