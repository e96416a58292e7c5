import type { HopOutcome } from "../probe/hop-types.js";
import type { NameResolution } from "../probe/name-resolution.js";

/**
 * The resolutions of one diagnostic, each shown once (details.resolutions)
 * and referenced by index from the requests that used it.
 *
 * Every hop resolves its name itself (the policy judges and pins each hop's
 * own answers: an answer that changed since the last hop is never dialled
 * unjudged), so a trace that visits a host twice, or sends a GET after its
 * HEAD, resolves it twice. Those lookups are one entry when they said the same
 * thing: the same name, resolver, chain, addresses and outcome; the first
 * one's TTLs and time are shown (a cache counts TTLs down between hops, which
 * is no news). A later lookup that said something else (a record changed,
 * one server failed) is an entry of its own, so no request points at an
 * answer it did not get.
 */
export interface ResolutionBook {
  /** The index of this resolution in the list, added when it is new; null for none (an IP-literal host). */
  add(resolution: NameResolution | undefined): number | null;
  /** The entries so far, in the order requests first used them. */
  list(): readonly NameResolution[];
}

export function createResolutionBook(): ResolutionBook {
  const entries: NameResolution[] = [];
  const byKey = new Map<string, number>();
  return {
    add(resolution) {
      if (resolution === undefined) return null;
      const key = sameAnswerKey(resolution);
      const known = byKey.get(key);
      if (known !== undefined) return known;
      byKey.set(key, entries.length);
      entries.push(resolution);
      return entries.length - 1;
    },
    list: () => [...entries],
  };
}

/** The resolution a hop's outcome carries, whatever its kind. */
export function resolutionOf(outcome: HopOutcome | null): NameResolution | undefined {
  if (outcome === null) return undefined;
  if (outcome.kind === "response") return outcome.response.resolution;
  if (outcome.kind === "failure") return outcome.trace.resolution;
  if (outcome.kind === "refused") return outcome.resolution;
  return undefined;
}

/**
 * Everything a lookup said but its TTLs, its time and its DNSSEC reading.
 * Bounded fields (name-resolution.ts), so a bounded key. The reading is asked
 * for the first request only (dnssec-query.ts): a later lookup that said the
 * same points at the first one's entry, which has it.
 */
function sameAnswerKey(resolution: NameResolution): string {
  const { name, source, cnameChain, cnameChainEnd, answers, answersOmitted, code, rcode } = resolution;
  return JSON.stringify([name, source, cnameChain, cnameChainEnd, answers.map(({ address }) => address), answersOmitted, code, rcode]);
}
