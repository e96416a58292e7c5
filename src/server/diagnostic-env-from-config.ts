import { readFileSync } from "node:fs";
import type { Config } from "../config.js";
import type { DiagnosticEnv } from "../diagnostics/diagnostic-env.js";
import { createProber } from "../probe/prober.js";
import { USER_AGENT } from "../version.js";

/** What the diagnostics run with, built from the configuration: the one prober and the limits in force. */
export function diagnosticEnvFromConfig(config: Config): DiagnosticEnv {
  const prober = createProber({
    allowCidrs: config.allowCidrs,
    dnsServers: config.dnsServers,
    ca: config.caFile === undefined ? undefined : readFileSync(config.caFile, "utf8"),
    userAgent: USER_AGENT,
  });
  return {
    prober,
    siteTimeoutMs: config.siteTimeoutMs,
    traceHopTimeoutMs: config.traceHopTimeoutMs,
    traceTotalTimeoutMs: config.traceTotalTimeoutMs,
    tracePorts: config.tracePorts,
  };
}
