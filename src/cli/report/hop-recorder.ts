import type { HopOutcome, Prober } from "../../probe/hop-types.js";

/** One request the prober made for a diagnostic, as it went out and as it came back. */
export interface RecordedHop {
  readonly url: string;
  readonly method: "GET" | "HEAD";
  readonly outcome: HopOutcome;
}

export interface HopRecorder {
  /** Behaves exactly as the prober it wraps; it only writes down what passes through. */
  readonly prober: Prober;
  /**
   * The requests grouped by chain position: consecutive requests for the same
   * URL are one position (a HEAD and its GET fallback), and the last of them is
   * the one whose answer the position reports.
   */
  positions(): readonly RecordedHop[];
}

/**
 * The redirect trace's contract result carries one time per hop; a person
 * at a terminal also wants it split by phase, and the address that answered.
 * Those are in the prober's outcomes, so the CLI watches the prober rather
 * than widening the diagnostic's result for one caller.
 */
export function createHopRecorder(inner: Prober): HopRecorder {
  const hops: RecordedHop[] = [];
  return {
    prober: {
      screen: (url, ports) => inner.screen(url, ports),
      hop: async (request) => {
        const outcome = await inner.hop(request);
        // A request that reads a body is the detailed trace's extra GET of the final
        // page (client-side redirects), not a position of the chain; details lists it.
        if (request.bodyPrefixBytes === undefined) hops.push({ url: request.url.href, method: request.method, outcome });
        return outcome;
      },
      close: () => inner.close(),
    },
    positions: () => hops.filter((hop, index) => hops[index + 1]?.url !== hop.url),
  };
}
