import { type VantageReading, type VantageVerdictId, vantageVerdict } from "./vantage-verdict.js";

// A call from several vantages while its entries arrive (the announced
// stream: the vantages asked and the deadline first, then an entry per
// vantage, then the service's verdict). The page and the CLI show the same
// thing from it: which regions are still out, for how long and until when,
// and a verdict so far that never claims more than was seen. The final
// verdict is never computed here: it is the stream's last message.

/** A vantage asked, as the announcement names it. */
export interface AskedVantage {
  readonly name: string;
  readonly label?: string | undefined;
  readonly location?: string | undefined;
}

/** The vantages asked that have no entry yet, in the order asked. */
export function stillOut<V extends { readonly name: string }>(asked: readonly V[], arrived: Iterable<string>): V[] {
  const seen = new Set(arrived);
  return asked.filter((vantage) => !seen.has(vantage.name));
}

/**
 * The verdict while `out` vantages have not answered, read by the one rule
 * (vantage-verdict.ts) with each of them as silent: so never "everywhere",
 * and never green, before the last is in. `waiting` while no entry that
 * arrived says anything about the target (only unavailable or refused ones,
 * or none at all), where the rule's `unavailable` would be premature.
 */
export function verdictSoFar(readings: readonly (VantageReading | undefined)[], out: number): VantageVerdictId | "waiting" {
  const all = [...readings, ...Array.from({ length: Math.max(0, out) }, () => undefined)];
  if (out > 0 && readings.every((reading) => reading === undefined)) return "waiting";
  return vantageVerdict(all);
}

/** Whole seconds waited so far, and the deadline's, as both show them: "12 s of 32 s". */
export function waitedWords(waitedMs: number, deadlineMs: number): string {
  return `${Math.floor(Math.max(0, waitedMs) / 1000)} s of ${Math.ceil(Math.max(0, deadlineMs) / 1000)} s`;
}
