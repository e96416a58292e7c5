import { parseProbe } from "../blackbox.js";
import { type Client, siteData } from "../http-client.js";
import type { Figure } from "../results.js";
import type { ServiceProcess } from "../service-process.js";
import type { BenchStack } from "../stack.js";
import { median } from "../stats.js";
import { processTreeCpuMicros } from "../process-cpu.js";
import { type LoadResult, runWrk } from "../wrk.js";

/** A wrk run with what it cost the measured tool's process tree: CPU microseconds per completed request. */
interface MeasuredRun extends LoadResult {
  readonly cpuPerRequestUs: number;
}

interface ThroughputCase {
  readonly scenario: number;
  readonly label: string;
  /** sitediag's REST path and the target path it is given. */
  readonly tool: "is-site-down" | "redirect-check";
  readonly targetPath: string;
  readonly blackboxModule: "http_get" | "http_head";
  /** Requests the target sees per check, checked on both tools before measuring. */
  readonly redirects: number;
  /** Settings of a sitediag serve of its own for this case; the shared one when absent. */
  readonly serviceEnv?: Readonly<Record<string, string>>;
}

const WARM_UP_SECONDS = 3;
/**
 * A fresh process's first warm-up. In side-by-side runs sitediag's CPU per
 * check kept falling for tens of seconds of load (V8's tiers, the heap
 * settling), so a scenario run first on a process, or on one of its own, got
 * a worse figure than the same scenario run later; every measured process
 * now has this much load behind it before its first round. blackbox_exporter
 * gets the same.
 */
const FIRST_WARM_UP_SECONDS = 20;

function warmUp(process: object): number {
  if (warmed.has(process)) return WARM_UP_SECONDS;
  warmed.add(process);
  return FIRST_WARM_UP_SECONDS;
}

export const THROUGHPUT_CASES: readonly ThroughputCase[] = [
  { scenario: 1, label: "is-site-down, direct 200", tool: "is-site-down", targetPath: "/ok", blackboxModule: "http_get", redirects: 0 },
  { scenario: 2, label: "is-site-down, 4 redirects", tool: "is-site-down", targetPath: "/r/1", blackboxModule: "http_get", redirects: 4 },
  { scenario: 3, label: "redirect-check, 5 hops", tool: "redirect-check", targetPath: "/r/1", blackboxModule: "http_head", redirects: 4 },
  // Like for like with blackbox_exporter, which dials every request: what the redirect chain costs without connection reuse.
  {
    scenario: 9,
    label: "is-site-down, 4 redirects, reuse off",
    tool: "is-site-down",
    targetPath: "/r/1",
    blackboxModule: "http_get",
    redirects: 4,
    serviceEnv: { SITEDIAG_REUSE_CONNECTIONS: "false" },
  },
];

/**
 * Scenarios 1-3: the same target through sitediag's REST door (with its key)
 * and blackbox_exporter's /probe, each driven by wrk at the same fixed
 * concurrency, alternating A and B every round so drift on a shared machine
 * hits both. Figures are medians of the rounds.
 */
export async function runThroughput(stack: BenchStack, client: Client, spec: ThroughputCase): Promise<Figure[]> {
  if (spec.serviceEnv === undefined) return measureThroughput(stack, stack.service, client, spec);
  const own = await stack.startService(`scenario-${spec.scenario}`, { extraEnv: spec.serviceEnv });
  try {
    return await measureThroughput(stack, own, client, spec);
  } finally {
    await own.stop();
  }
}

/** Processes that have had their long warm-up (the shared service after its first scenario, blackbox_exporter after its first). */
const warmed = new WeakSet<object>();

async function measureThroughput(stack: BenchStack, service: ServiceProcess, client: Client, spec: ThroughputCase): Promise<Figure[]> {
  const { options, blackbox } = stack;
  const target = stack.target.url(spec.targetPath);
  const sitediagSide = {
    url: `${service.url}/api/v1/${spec.tool}?url=${encodeURIComponent(target)}`,
    headers: { "x-api-key": service.apiKey },
  };
  const blackboxSide = blackbox === null ? null : { url: blackbox.probeUrl(spec.blackboxModule, target), headers: {} };

  await verify(client, spec, sitediagSide, blackboxSide);
  const run = async (side: { url: string; headers: Record<string, string>; pid: number }, seconds: number): Promise<MeasuredRun> => {
    const before = processTreeCpuMicros(side.pid);
    const result = await runWrk({ url: side.url, headers: side.headers, connections: options.concurrency, durationSeconds: seconds });
    const spent = processTreeCpuMicros(side.pid) - before;
    return { ...result, cpuPerRequestUs: result.requests === 0 ? Infinity : spent / result.requests };
  };
  const a = { ...sitediagSide, pid: service.child.pid };
  const b = blackboxSide === null || blackbox === null ? null : { ...blackboxSide, pid: blackbox.child.pid };
  // Unmeasured warm-up, long enough for V8 to have compiled the hot path and
  // sized its heap (FIRST_WARM_UP_SECONDS on a process's first scenario):
  // a one-second warm-up left the first round of a fresh service paying for
  // its JIT (a third more CPU per check). blackbox_exporter is compiled ahead
  // of time and gets the same runs, for the same target state.
  await run(a, warmUp(service.child));
  if (b !== null && blackbox !== null) await run(b, warmUp(blackbox.child));

  const sitediag: MeasuredRun[] = [];
  const other: MeasuredRun[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? ["a", "b"] : ["b", "a"];
    for (const side of order) {
      if (side === "a") sitediag.push(await run(a, options.durationSeconds));
      else if (b !== null) other.push(await run(b, options.durationSeconds));
    }
  }
  for (const [name, results] of [
    ["sitediag", sitediag],
    ["blackbox", other],
  ] as const) {
    const errors = results.reduce((sum, result) => sum + result.errors, 0);
    if (errors > 0) console.warn(`scenario ${spec.scenario}: ${name} had ${errors} errors or non-2xx answers during measurement`);
  }

  const figure = (name: string, unit: string, pick: (result: MeasuredRun) => number, goal?: string): Figure => ({
    scenario: spec.scenario,
    name: `${spec.label}: ${name}`,
    unit,
    sitediag: median(sitediag.map(pick)),
    blackbox: b === null ? null : median(other.map(pick)),
    rounds: { sitediag: sitediag.map(pick), blackbox: other.map(pick) },
    ...(goal === undefined ? {} : { goal }),
  });
  const throughputGoal = spec.scenario === 1 || spec.scenario === 2 ? ">= 1.5x blackbox" : undefined;
  const cpuGoal = spec.serviceEnv === undefined ? "<= 0.5x blackbox" : undefined;
  return [
    figure(spec.tool === "redirect-check" ? "traces/s" : "checks/s", "/s", (result) => result.perSecond, throughputGoal),
    figure("p50 latency", "ms", (result) => result.p50Ms),
    figure("p99 latency", "ms", (result) => result.p99Ms),
    // Process tree: sitediag's serve (and its workers), blackbox_exporter; not wrk, not the target.
    figure("CPU per check", "us", (result) => result.cpuPerRequestUs, cpuGoal),
    ...(spec.redirects > 0 ? [figure("CPU per request hop", "us", (result) => result.cpuPerRequestUs / (spec.redirects + 1))] : []),
  ];
}

/** One answer from each side, read in full, before anything is timed: a fast wrong answer is no result. */
async function verify(
  client: Client,
  spec: ThroughputCase,
  a: { url: string; headers: Record<string, string> },
  b: { url: string; headers: Record<string, string> } | null,
): Promise<void> {
  const data = siteData(await client.get(a.url, a.headers));
  const ok =
    spec.tool === "is-site-down"
      ? data.status === "up" && data.statusCode === 200 && (data.redirectHops?.length ?? 0) === spec.redirects
      : data.redirects === spec.redirects && data.chain?.length === spec.redirects + 1;
  if (!ok) throw new Error(`scenario ${spec.scenario}: sitediag answered ${JSON.stringify(data)}`);
  if (b === null) return;
  const probe = parseProbe((await client.get(b.url)).body);
  if (!probe.success || probe.statusCode !== 200 || probe.redirects !== spec.redirects) {
    throw new Error(`scenario ${spec.scenario}: blackbox probe answered ${JSON.stringify(probe)}`);
  }
}
