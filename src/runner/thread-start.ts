import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";
import type { ProbeThreadData } from "./thread-messages.js";

/** The module a probe thread runs unless told otherwise: compiled beside this one, or the source under tsx. */
export const DIAGNOSTIC_THREAD_ENTRY = new URL(
  import.meta.url.endsWith(".ts") ? "./diagnostic-thread.ts" : "./diagnostic-thread.js",
  import.meta.url,
);

/**
 * A dead thread is always replaced, after a delay that grows with each death
 * in a row: a thread that dies as it boots (or whatever kills it keeps
 * coming) would otherwise be rebooted in a tight loop, a boot being tens of
 * milliseconds of CPU compiled and seconds from source. The first
 * replacement starts at once. The cap is short because the delay is also
 * time the slot serves nothing: a death a caller can cause should not buy
 * them a long outage (the other threads serve meanwhile; with none left the
 * service reports not ready and refuses checks with 503).
 */
export interface RestartBackoff {
  /** The delay before the second replacement in a row; each later one doubles it. */
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
  /** A thread that lived this long after its boot died healthy: the next replacement starts at once again. */
  readonly healthyAfterMs: number;
}

export const RESTART_BACKOFF: RestartBackoff = { firstDelayMs: 100, maxDelayMs: 2_000, healthyAfterMs: 10_000 };

/** The delay before the replacement of a thread that died `deaths` times in a row: none for the first, then doubling up to the cap. */
export function restartDelayMs(deaths: number, backoff: RestartBackoff): number {
  return deaths <= 1 ? 0 : Math.min(backoff.maxDelayMs, backoff.firstDelayMs * 2 ** (deaths - 2));
}

/**
 * A probe thread's young generation (V8's nursery), in MiB. A thread's garbage
 * is nearly all short-lived (a hop's buffers, promises, outcome objects), and
 * V8's default nursery lets it grow to tens of MiB before a scavenge: memory
 * held for nothing. A nursery of a few MiB stays in cache: less CPU per check
 * than the default, and less memory with many checks in flight (figures, 4 MiB
 * against 8 and the default: docs/benchmarks.md).
 */
const YOUNG_GENERATION_MB = 8;

/** Starts a probe thread running `module` with `data` as its workerData, each time it is called. */
export function threadStarter(module: URL, data: ProbeThreadData): () => Worker {
  const start = threadStart(module);
  const options: WorkerOptions = Object.assign({}, start.options, {
    workerData: data,
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
  });
  return () => new Worker(start.entry, options);
}

/**
 * How a probe thread is started: a compiled module (dist/) as it is; a
 * TypeScript source module (tests, `node --import tsx`) by a few lines that
 * register tsx's loader in the thread before importing it (on Node 20 a thread does not take `--import tsx` from its
 * execArgv in time for its own entry module).
 */
function threadStart(module: URL): { readonly entry: string | URL; readonly options: WorkerOptions } {
  if (!module.pathname.endsWith(".ts")) return { entry: module, options: {} };
  const tsx = createRequire(import.meta.url)
    .resolve("tsx/esm/api")
    .replace(/\.cjs$/, ".mjs");
  const source = module.href;
  const boot = `import(${JSON.stringify(pathToFileURL(tsx).href)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`;
  return { entry: boot, options: { eval: true, execArgv: [] } };
}
