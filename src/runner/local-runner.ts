import { type DiagnosticEnv, limitsOf } from "../diagnostics/diagnostic-call.js";
import { traceRedirects } from "../diagnostics/redirect-trace.js";
import { checkSite } from "../diagnostics/site-check.js";
import type { AbortWatch } from "../probe/clock.js";
import type { HopOutcome, Prober } from "../probe/hop-types.js";
import { type DiagnosticAnswer, type DiagnosticJob, type DiagnosticRunner, type HopTally, hopListeners } from "./diagnostic-runner.js";

/**
 * Diagnostics run in this process with `env`'s prober and limits: the CLI's
 * commands (one caller, nothing else on the loop), `serve` with
 * SITEDIAG_PROBE_THREADS=0, and most tests. Each diagnostic's hops are told
 * to onHops when it ends, as a probe thread tells them.
 */
export function createLocalRunner(env: DiagnosticEnv): DiagnosticRunner {
  const limits = limitsOf(env);
  const hops = hopListeners();
  const run = async <O>(job: DiagnosticJob, signal: AbortWatch | undefined): Promise<O> => {
    const seen: HopTally[] = [];
    try {
      // A job of this runner names its outcome by its kind (runDiagnostic).
      return (await runDiagnostic(job, env.prober, signal, (outcome) => seen.push(outcome))) as O;
    } finally {
      // Hops a defect cut short were made all the same.
      hops.tell(seen);
    }
  };
  return {
    checkSite: (raw, signal, options) => run({ kind: "site-check", raw, limits, options }, signal),
    traceRedirects: (raw, signal, options) => run({ kind: "trace", raw, limits, options }, signal),
    onHops: hops.onHops,
    ready: () => Promise.resolve(),
    close: () => env.prober.close(),
  };
}

/**
 * Runs `job` whole on this loop with `prober`, telling `onHop` how each hop
 * ended: the local runner's work, and a probe thread's for each job it is
 * handed (thread-host.ts), so a chain of hops crosses between threads once,
 * not once per hop.
 */
export function runDiagnostic(
  job: DiagnosticJob,
  prober: Prober,
  signal: AbortWatch | undefined,
  onHop: (outcome: HopOutcome) => void,
): Promise<DiagnosticAnswer["outcome"]> {
  const env: DiagnosticEnv = Object.assign({}, job.limits, { prober: observedProber(prober, onHop) });
  if (job.kind === "site-check") return checkSite(job.raw, env, signal, job.options);
  return traceRedirects(job.raw, env, signal, job.options);
}

/**
 * The prober, telling `onHop` how each hop ended once it has. Both
 * diagnostics reach targets only through a prober, so this sees every
 * outbound request of a diagnostic without the engine knowing who listens.
 * Nothing else of the prober is passed on, so no way round `onHop` is left open.
 */
function observedProber(prober: Prober, onHop: (outcome: HopOutcome) => void): Prober {
  return {
    screen: (url, ports) => prober.screen(url, ports),
    hop: async (request) => {
      const outcome = await prober.hop(request);
      onHop(outcome);
      return outcome;
    },
    // Handshakes only, no hop outcome to tell: they are details' evidence, not requests of the diagnostic.
    tlsVersions: (request) => prober.tlsVersions(request),
    close: () => prober.close(),
  };
}
