import type { Config } from "../config.js";
import type { DiagnosticEnv, DiagnosticLimits } from "./diagnostic-env.js";
import type { ProberOptions } from "../probe/hop-types.js";
import type { DefectReporter } from "../probe/defect-log.js";
import { createProber } from "../probe/prober.js";
import { createThreadedProber, type ThreadExit } from "../probe/threaded-prober.js";
import { USER_AGENT } from "../package-info.js";
import { DIAGNOSTIC_THREAD_ENTRY, threadedDiagnostics } from "./threaded-diagnostics.js";

export interface EnvOptions {
  /** Told when a probe thread stops on its own (SITEDIAG_PROBE_THREADS > 0), for the log. */
  readonly onProbeThreadExit?: (event: ThreadExit) => void;
  /**
   * Told of a hop that met a defect of ours (internal_probe_error) when the
   * hops run on this thread (SITEDIAG_PROBE_THREADS=0): the service's logger,
   * or the CLI's stderr, whose stdout is the answer. Probe threads write the
   * probe's own line (defect-log.ts) to the process's stdout, the service log.
   */
  readonly onProbeDefect?: DefectReporter;
}

/**
 * What the diagnostics run with, built from the configuration: the one
 * prober (with the CA certificates read from SITEDIAG_CA_FILE, when set) and
 * the limits in force. With SITEDIAG_PROBE_THREADS > 0 each diagnostic runs
 * whole on one of that many threads, with the thread's own prober; with 0,
 * on this thread.
 */
export function diagnosticEnvFromConfig(config: Config, ca: string | undefined, options: EnvOptions = {}): DiagnosticEnv {
  const limits: DiagnosticLimits = {
    siteTimeoutMs: config.siteTimeoutMs,
    traceHopTimeoutMs: config.traceHopTimeoutMs,
    traceTotalTimeoutMs: config.traceTotalTimeoutMs,
    tracePorts: config.tracePorts,
  };
  const proberOptions: ProberOptions = {
    allowCidrs: config.allowCidrs,
    dnsServers: config.dnsServers,
    hostsFile: config.hostsFile,
    maxResponseHeadBytes: config.maxResponseHeadBytes,
    reuseConnections: config.reuseConnections,
    ca,
    userAgent: USER_AGENT,
  };
  if (config.probeThreads === 0) return Object.assign({}, limits, { prober: createProber(proberOptions, options.onProbeDefect === undefined ? {} : { onDefect: options.onProbeDefect }) });
  const prober = createThreadedProber(proberOptions, {
    threads: config.probeThreads,
    maxLoopDelayMs: config.probeMaxLoopDelayMs,
    entry: DIAGNOSTIC_THREAD_ENTRY,
    ...(options.onProbeThreadExit === undefined ? {} : { onThreadExit: options.onProbeThreadExit }),
  });
  return Object.assign({}, limits, { prober, threads: threadedDiagnostics(prober) });
}
