/**
 * The DiagnosticEnv the site-check tests run with: a real prober that may only
 * reach loopback, trusting the test CA, optionally resolving through the DNS
 * fixture. Nothing here leaves 127.0.0.0/8 or ::1.
 */
import { REDIRECT_TRACE, SITE_CHECK } from "../../src/limits.js";
import type { DiagnosticEnv } from "../../src/diagnostics/diagnostic-env.js";
import { checkSite } from "../../src/diagnostics/site-check.js";
import type { SiteCheckResult } from "../../src/diagnostics/site-check-result.js";
import { createProber } from "../../src/probe/prober.js";
import { USER_AGENT } from "../../src/version.js";

export const LOOPBACK_CIDRS = ["127.0.0.0/8", "::1/128"] as const;

export interface TestEnvOptions {
  /** PEM of the CA the prober trusts beside Node's defaults. */
  readonly ca?: string;
  /** DNS fixture address(es), "127.0.0.1:PORT". */
  readonly dnsServers?: readonly string[];
  readonly siteTimeoutMs?: number;
}

export interface TestEnv extends DiagnosticEnv {
  close(): Promise<void>;
}

export function createTestEnv(options: TestEnvOptions = {}): TestEnv {
  const prober = createProber({
    allowCidrs: LOOPBACK_CIDRS,
    dnsServers: options.dnsServers ?? [],
    ca: options.ca,
    userAgent: USER_AGENT,
  });
  return {
    prober,
    siteTimeoutMs: options.siteTimeoutMs ?? SITE_CHECK.requestTimeoutMs,
    traceHopTimeoutMs: REDIRECT_TRACE.hopTimeoutMs,
    traceTotalTimeoutMs: REDIRECT_TRACE.totalTimeoutMs,
    tracePorts: REDIRECT_TRACE.ports,
    close: () => prober.close(),
  };
}

/** Runs a site check that must produce a result (not a refusal of its input). */
export async function checkedResult(raw: string, env: DiagnosticEnv): Promise<SiteCheckResult> {
  const outcome = await checkSite(raw, env);
  if (outcome.kind !== "checked") throw new Error(`expected a result, got refusal ${JSON.stringify(outcome.refusal)}`);
  return outcome.result;
}
