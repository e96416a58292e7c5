import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchOptions } from "./bench-options.js";
import { type Blackbox, blackboxVersion, startBlackbox } from "./blackbox.js";
import { type BenchChild, firstLine, startChild } from "./child.js";
import { type BenchPki, type LeafKind, makeBenchPki } from "./https-pki.js";
import { type ServiceProcess, type ServiceSetup, startService } from "./service-process.js";
import type { TargetPorts } from "./target-server.js";

/** Everything a scenario needs, all on loopback. */
export interface BenchStack {
  readonly options: BenchOptions;
  /** A directory for stores and configs, removed at the end. */
  readonly dir: string;
  readonly target: {
    readonly ports: TargetPorts;
    url(path: string): string;
    httpsUrl(leaf: LeafKind, path: string): string;
    readonly silentUrl: string;
  };
  /** The CA and leaves of the target's HTTPS ports. */
  readonly pki: BenchPki;
  /** `sitediag serve` on SQLite, shared by the throughput scenarios. */
  readonly service: ServiceProcess;
  /** null when blackbox_exporter is not installed. */
  readonly blackbox: Blackbox | null;
  /** A service of its own (a clean peak-RSS reading, another store); stopped by the caller. */
  startService(name: string, setup?: Partial<ServiceSetup>): Promise<ServiceProcess>;
  /** A blackbox_exporter of its own (a clean peak-RSS reading); null when not installed. */
  startBlackbox(): Promise<Blackbox | null>;
  close(): Promise<void>;
}

/** Is-site-down's per-request timeout, which blackbox's modules copy. */
const TIMEOUT_SECONDS = 6;

export async function startStack(options: BenchOptions): Promise<BenchStack> {
  const dir = mkdtempSync(join(tmpdir(), "sitediag-bench-"));
  const stoppers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const pki = await makeBenchPki(dir);
    const targetChild = startTarget(pki);
    stoppers.push(() => targetChild.stop());
    const ports = await targetPorts(targetChild);
    const version = blackboxVersion();

    const launchService = async (name: string, setup: Partial<ServiceSetup> = {}) => {
      const profile = options.cpuProfileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`];
      const workers = {
        SITEDIAG_WORKERS: String(options.workers),
        ...(options.probeThreads === undefined ? {} : { SITEDIAG_PROBE_THREADS: options.probeThreads }),
      };
      return startService({
        store: `sqlite:${join(dir, `${name}.db`)}`,
        tracePort: ports.http,
        nodeArgs: [...profile, ...options.nodeArgs],
        ...setup,
        extraEnv: { ...workers, ...setup.extraEnv },
      });
    };
    const launchBlackbox = async () => (version === null ? null : startBlackbox(dir, TIMEOUT_SECONDS, version, pki.caFile));

    const service = await launchService("shared");
    stoppers.push(() => service.stop());
    const blackbox = await launchBlackbox();
    if (blackbox !== null) stoppers.push(() => blackbox.stop());

    return {
      options,
      dir,
      target: {
        ports,
        url: (path) => `http://127.0.0.1:${ports.http}${path}`,
        httpsUrl: (leaf, path) => `https://127.0.0.1:${ports.https?.[leaf] ?? 0}${path}`,
        silentUrl: `http://127.0.0.1:${ports.silent}/`,
      },
      pki,
      service,
      blackbox,
      startService: launchService,
      startBlackbox: launchBlackbox,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The target server (target-server.ts), serving HTTPS too with the leaves of `pki`. */
export function startTarget(pki: BenchPki): BenchChild {
  return startChild(process.execPath, [join(import.meta.dirname, "target-server.js")], {
    env: { ...process.env, BENCH_TARGET_TLS: JSON.stringify(pki.leaves) },
  });
}

/** The ports the target server (target-server.ts) prints as its first line. */
export async function targetPorts(child: BenchChild): Promise<TargetPorts> {
  const ports = JSON.parse(await firstLine(child)) as Partial<TargetPorts>;
  if (typeof ports.http !== "number" || typeof ports.silent !== "number") throw new Error(`target server printed no ports`);
  return { http: ports.http, silent: ports.silent, https: ports.https ?? {} };
}
