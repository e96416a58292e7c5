import type { Config } from "../config.js";
import type { DiagnosticLimits } from "../diagnostics/diagnostic-call.js";
import type { ProberOptions } from "../probe/hop-types.js";
import type { DefectReporter } from "../probe/defect-log.js";
import { createProber } from "../probe/prober.js";
import { USER_AGENT } from "../package-info.js";
import type { DiagnosticRunner } from "./diagnostic-runner.js";
import { createLocalRunner } from "./local-runner.js";
import { createProbeThreads, type ThreadExit } from "./probe-threads.js";
import { createThreadedRunner } from "./threaded-runner.js";

export interface RunnerOptions {
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
 * Where the diagnostics run, built from the configuration: the prober (with
 * the CA certificates read from SITEDIAG_CA_FILE, when set) and the limits in
 * force. With SITEDIAG_PROBE_THREADS > 0 each diagnostic runs whole on one of
 * that many threads, each with a prober of its own; with 0, on this thread.
 */
export function diagnosticRunnerFromConfig(config: Config, ca: string | undefined, options: RunnerOptions = {}): DiagnosticRunner {
  const limits: DiagnosticLimits = {
    siteTimeoutMs: config.siteTimeoutMs,
    traceHopTimeoutMs: config.traceHopTimeoutMs,
    traceTotalTimeoutMs: config.traceTotalTimeoutMs,
    tracePorts: config.tracePorts,
    certExpiryWarnDays: config.certExpiryWarnDays,
    domainExpiryWarnDays: config.domainExpiryWarnDays,
    ...(config.rdapBootstrapFile === undefined ? {} : { rdapBootstrapFile: config.rdapBootstrapFile }),
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
  if (config.probeThreads === 0) {
    const prober = createProber(proberOptions, options.onProbeDefect === undefined ? {} : { onDefect: options.onProbeDefect });
    return createLocalRunner(Object.assign({}, limits, { prober }));
  }
  const threads = createProbeThreads(proberOptions, {
    threads: config.probeThreads,
    maxLoopDelayMs: config.probeMaxLoopDelayMs,
    ...(options.onProbeThreadExit === undefined ? {} : { onThreadExit: options.onProbeThreadExit }),
  });
  return createThreadedRunner(threads, limits);
}
