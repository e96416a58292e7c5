/**
 * How big a bench run is, from the environment, so a quick run during
 * development and the full run use the same code:
 *
 *   BENCH_QUICK=1          one short round of everything, small counts (about a minute)
 *   BENCH_ROUNDS           A/B rounds per throughput scenario (default 3; quick 1)
 *   BENCH_DURATION_S       seconds per load run (default 5; quick 2)
 *   BENCH_CONCURRENCY      connections for throughput runs (default 50)
 *   BENCH_INFLIGHT         checks held in flight in scenario 5 (default 1000; quick 200)
 *   BENCH_SCENARIOS        comma-separated scenario numbers to run (default all: 1,2,3,4,5,6,7,8,9,10,11)
 *   BENCH_CPU_PROF         a directory: run the service under --cpu-prof, profiles written there
 *   BENCH_NODE_ARGS        node flags for every sitediag serve the bench starts, space-separated (a V8 setting tried against the default)
 *   BENCH_LOG_LEVEL        the service's LOG_LEVEL (default warn)
 *   BENCH_WORKERS          the service's SITEDIAG_WORKERS (default 1)
 *   BENCH_PROBE_THREADS    the service's SITEDIAG_PROBE_THREADS (default: unset, the service's own default)
 */
export interface BenchOptions {
  readonly quick: boolean;
  readonly rounds: number;
  readonly durationSeconds: number;
  readonly concurrency: number;
  readonly inflight: number;
  /** Samples per delay at concurrency 1 and at concurrency 100 (scenario 4). */
  readonly fidelitySamples: { readonly serial: number; readonly parallel: number };
  readonly scenarios: ReadonlySet<number>;
  readonly cpuProfileDir: string | undefined;
  /** Node flags for every sitediag serve the bench starts, after the profiler's. */
  readonly nodeArgs: readonly string[];
  /** SITEDIAG_WORKERS for every sitediag serve the bench starts. */
  readonly workers: number;
  /** SITEDIAG_PROBE_THREADS as given ("0", "2", "auto"); undefined leaves the service's default. */
  readonly probeThreads: string | undefined;
}

export function benchOptions(env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const quick = env.BENCH_QUICK === "1";
  const scenarios = (env.BENCH_SCENARIOS ?? "1,2,3,4,5,6,7,8,9,10,11")
    .split(",")
    .map((item) => Number(item.trim()))
    .filter((item) => Number.isInteger(item) && item >= 1 && item <= 11);
  return {
    quick,
    rounds: whole(env, "BENCH_ROUNDS", quick ? 1 : 3),
    durationSeconds: whole(env, "BENCH_DURATION_S", quick ? 2 : 5),
    concurrency: whole(env, "BENCH_CONCURRENCY", 50),
    inflight: whole(env, "BENCH_INFLIGHT", quick ? 200 : 1_000),
    fidelitySamples: quick ? { serial: 5, parallel: 100 } : { serial: 12, parallel: 1_000 },
    scenarios: new Set(scenarios),
    cpuProfileDir: env.BENCH_CPU_PROF === undefined || env.BENCH_CPU_PROF === "" ? undefined : env.BENCH_CPU_PROF,
    nodeArgs: (env.BENCH_NODE_ARGS ?? "").split(/\s+/).filter((word) => word !== ""),
    workers: whole(env, "BENCH_WORKERS", 1),
    probeThreads: env.BENCH_PROBE_THREADS === undefined || env.BENCH_PROBE_THREADS === "" ? undefined : env.BENCH_PROBE_THREADS,
  };
}

function whole(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = env[name];
  if (value === undefined || value === "") return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`${name} must be a whole number above 0, got "${value}"`);
  return parsed;
}
