import type { Config } from "../config.js";
import type { DiagnosticEnv } from "./diagnostic-env.js";
import { createProber } from "../probe/prober.js";
import { USER_AGENT } from "../version.js";

/**
 * What the diagnostics run with, built from the configuration: the one
 * prober (with the CA certificates read from SITEDIAG_CA_FILE, when set) and
 * the limits in force.
 */
export function diagnosticEnvFromConfig(config: Config, ca: string | undefined): DiagnosticEnv {
  return {
    prober: createProber({ allowCidrs: config.allowCidrs, dnsServers: config.dnsServers, hostsFile: config.hostsFile, maxResponseHeadBytes: config.maxResponseHeadBytes, ca, userAgent: USER_AGENT }),
    siteTimeoutMs: config.siteTimeoutMs,
    traceHopTimeoutMs: config.traceHopTimeoutMs,
    traceTotalTimeoutMs: config.traceTotalTimeoutMs,
    tracePorts: config.tracePorts,
  };
}
