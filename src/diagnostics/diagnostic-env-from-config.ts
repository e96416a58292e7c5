import type { Config } from "../config.js";
import type { DiagnosticEnv } from "./diagnostic-env.js";
import type { Prober, ProberOptions } from "../probe/hop-types.js";
import { createProber } from "../probe/prober.js";
import { createThreadedProber, type ThreadExit } from "../probe/threaded-prober.js";
import { USER_AGENT } from "../version.js";

export interface EnvOptions {
  /** Told when a probe thread stops on its own (SITEDIAG_PROBE_THREADS > 0), for the log. */
  readonly onProbeThreadExit?: (event: ThreadExit) => void;
}

/**
 * What the diagnostics run with, built from the configuration: the one
 * prober (with the CA certificates read from SITEDIAG_CA_FILE, when set; on
 * SITEDIAG_PROBE_THREADS worker threads, or on this thread when 0) and the
 * limits in force.
 */
export function diagnosticEnvFromConfig(config: Config, ca: string | undefined, options: EnvOptions = {}): DiagnosticEnv {
  return {
    prober: proberFromConfig(config, ca, options),
    siteTimeoutMs: config.siteTimeoutMs,
    traceHopTimeoutMs: config.traceHopTimeoutMs,
    traceTotalTimeoutMs: config.traceTotalTimeoutMs,
    tracePorts: config.tracePorts,
  };
}

function proberFromConfig(config: Config, ca: string | undefined, options: EnvOptions): Prober {
  const proberOptions: ProberOptions = {
    allowCidrs: config.allowCidrs,
    dnsServers: config.dnsServers,
    hostsFile: config.hostsFile,
    maxResponseHeadBytes: config.maxResponseHeadBytes,
    reuseConnections: config.reuseConnections,
    ca,
    userAgent: USER_AGENT,
  };
  if (config.probeThreads === 0) return createProber(proberOptions);
  return createThreadedProber(proberOptions, {
    threads: config.probeThreads,
    maxLoopDelayMs: config.probeMaxLoopDelayMs,
    ...(options.onProbeThreadExit === undefined ? {} : { onThreadExit: options.onProbeThreadExit }),
  });
}
