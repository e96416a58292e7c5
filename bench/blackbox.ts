import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { quietLoopbackPort } from "../testkit/loopback-ports.js";
import { type BenchChild, startChild, waitForOk } from "./child.js";

const BLACKBOX_BINARY = process.env.BENCH_BLACKBOX_BINARY ?? "prometheus-blackbox-exporter";

export interface Blackbox {
  readonly child: BenchChild;
  readonly version: string;
  /** The /probe URL for a target with one of the generated modules. */
  probeUrl(module: BlackboxModule, target: string): string;
  stop(): Promise<void>;
}

/** http_get mirrors is-site-down (GET, follow redirects); http_head mirrors redirect-check (HEAD); https_get is http_get trusting the bench's CA. */
export type BlackboxModule = "http_get" | "http_head" | "https_get";

/** null when blackbox_exporter is not installed: the bench then measures sitediag alone. */
export function blackboxVersion(): string | null {
  const probe = spawnSync(BLACKBOX_BINARY, ["--version"], { encoding: "utf8" });
  if (probe.error !== undefined || probe.status !== 0) return null;
  return /version (\S+)/.exec(`${probe.stdout}${probe.stderr}`)?.[1] ?? "unknown";
}

/**
 * Writes a config whose modules use sitediag's is-site-down timeout (6 s)
 * and follow redirects. blackbox_exporter's redirect cap is fixed in its code
 * (it stops after 10) and cannot be configured; every chain the bench uses is
 * shorter than both tools' caps, so both follow every hop. Any status is
 * accepted as a success only when it is 2xx, as blackbox does by default.
 */
export async function startBlackbox(dir: string, timeoutSeconds: number, version: string, caFile: string): Promise<Blackbox> {
  const config = join(dir, "blackbox.yml");
  const module = (method: string) =>
    [
      `    prober: http`,
      `    timeout: ${timeoutSeconds}s`,
      `    http:`,
      `      method: ${method}`,
      `      follow_redirects: true`,
      `      preferred_ip_protocol: ip4`,
    ].join("\n");
  // The bench's CA as a private CA is trusted: beside the system's roots, in the module's TLS settings.
  const https = `${module("GET")}\n      tls_config:\n        ca_file: ${caFile}`;
  writeFileSync(config, `modules:\n  http_get:\n${module("GET")}\n  http_head:\n${module("HEAD")}\n  https_get:\n${https}\n`);
  const port = await quietLoopbackPort();
  const child = startChild(BLACKBOX_BINARY, [`--config.file=${config}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"]);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitForOk(`${base}/-/healthy`, child);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return {
    child,
    version,
    probeUrl: (moduleName, target) => `${base}/probe?module=${moduleName}&target=${encodeURIComponent(target)}`,
    stop: () => child.stop(),
  };
}

/** The figures the bench reads from one /probe answer (Prometheus text format). */
export interface BlackboxProbe {
  readonly success: boolean;
  readonly durationMs: number;
  readonly statusCode: number;
  readonly redirects: number;
}

export function parseProbe(text: string): BlackboxProbe {
  const value = (name: string): number => {
    const match = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
    return match === null ? Number.NaN : Number(match[1]);
  };
  return {
    success: value("probe_success") === 1,
    durationMs: value("probe_duration_seconds") * 1_000,
    statusCode: value("probe_http_status_code"),
    redirects: value("probe_http_redirects"),
  };
}
