import type { HopOutcome, Prober } from "./hop-types.js";

/**
 * The prober, telling `onHop` how each hop ended once it has. Both
 * diagnostics reach targets only through a prober, so this sees every
 * outbound request of the loop it runs on without the engine knowing who
 * listens (the service's hop metric; a diagnostic thread's tally for it).
 * Its load and readiness are the prober's own; nothing else of it is passed
 * on, so no way round `onHop` is left open.
 */
export function observedProber(prober: Prober, onHop: (outcome: HopOutcome) => void): Prober {
  return {
    screen: (url, ports) => prober.screen(url, ports),
    hop: async (request) => {
      const outcome = await prober.hop(request);
      onHop(outcome);
      return outcome;
    },
    close: () => prober.close(),
    ...(prober.load === undefined ? {} : { load: prober.load }),
    ...(prober.ready === undefined ? {} : { ready: prober.ready.bind(prober) }),
  };
}
