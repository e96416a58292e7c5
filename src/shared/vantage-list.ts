import { type CauseInfo, vantageListCause } from "./failures.js";
import { VANTAGES } from "./limits.js";

// The vantages a caller names, below every layer: the access layer prices a
// call by their count before anything runs, the vantage layer resolves `all`,
// the service runs them, and the CLI reads its --vantages with the same rule.

/** The word that asks for every vantage with a live instance. */
export const ALL_VANTAGES = "all";

/**
 * What a caller's `vantages` ask for: nothing (the plain, single-server
 * call), every live vantage, the named ones (deduplicated, sorted), or a
 * list that is not one, with the row of the failure table that says why.
 */
export type VantageList =
  | { readonly kind: "none" }
  | { readonly kind: "all" }
  | { readonly kind: "names"; readonly names: readonly string[] }
  | { readonly kind: "problem"; readonly problem: CauseInfo };

/**
 * Reads the request's `vantages` elements, each of which may hold several
 * names separated by commas (`vantages=eu-west,us-east` arrives as one
 * element; a Connect caller may send one name per element): blanks around
 * a name are dropped, a name is checked by isVantageName, `all` must stand
 * alone, and at most VANTAGES.maxNamed names may be given (a repeat counts,
 * so the work is bounded by the count, not only by what survives).
 * Total: a value for every input.
 */
export function readVantageList(elements: readonly string[]): VantageList {
  if (elements.length === 0) return { kind: "none" };
  const names = new Set<string>();
  let given = 0;
  for (const element of elements) {
    // More characters than the most names could hold: refused before splitting it.
    if (element.length > VANTAGES.maxNamed * (VANTAGES.maxNameLength + 2)) return problem("VANTAGES_TOO_MANY");
    for (const part of element.split(",")) {
      given += 1;
      if (given > VANTAGES.maxNamed) return problem("VANTAGES_TOO_MANY");
      const name = part.trim();
      if (name !== ALL_VANTAGES && !isVantageName(name)) return problem("VANTAGES_SYNTAX");
      names.add(name);
    }
  }
  if (names.has(ALL_VANTAGES)) return names.size === 1 ? { kind: "all" } : problem("VANTAGES_SYNTAX");
  return { kind: "names", names: [...names].sort() };
}

/** A vantage's name: lower-case letters, digits and '-', not at either end, 1 to VANTAGES.maxNameLength characters; never `all`. */
export function isVantageName(text: string): boolean {
  return text.length <= VANTAGES.maxNameLength && text !== ALL_VANTAGES && /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/.test(text);
}

function problem(key: "VANTAGES_SYNTAX" | "VANTAGES_TOO_MANY"): VantageList {
  return { kind: "problem", problem: vantageListCause(key) };
}
