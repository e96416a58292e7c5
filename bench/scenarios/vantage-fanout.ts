import { loadConfig } from "../../src/config.js";
import { sharedClockMs } from "../../src/probe/clock.js";
import { diagnosticRunnerFromConfig } from "../../src/runner/runner-from-config.js";
import { createRedisFanout, type RedisFanout } from "../../src/vantage/redis/redis-fanout.js";
import { vantageKeys } from "../../src/vantage/redis/vantage-keys.js";
import type { VantageEntry, VantageJob } from "../../src/vantage/vantage-fanout.js";
import { redisAvailability, startRedisServer } from "../../testkit/redis-server.js";
import { processTreeCpuMicros } from "../process-cpu.js";
import { type TimelineStep, wallMs, watchFanout } from "./fanout-timeline.js";
import type { Figure } from "../results.js";
import type { ServiceProcess } from "../service-process.js";
import type { BenchStack } from "../stack.js";
import { median, percentile } from "../stats.js";

const SCENARIO = 10;
const VANTAGES = ["bench-a", "bench-b", "bench-c"];

/**
 * Scenario 10: the vantage engine over Redis Streams. Three `sitediag serve`
 * processes, one per vantage, share a Redis; this process dispatches with the
 * engine's run() (a dispatcher that is a worker of none). Overhead: a
 * 3-vantage run of the direct-200 check minus the slowest of the same three
 * checks run at once in this process, paired and alternated. Then 1,000
 * 3-vantage runs at once, every entry counted: none may be lost or come twice.
 * CPU per vantage check is the dispatcher and the three serve processes
 * (Redis not counted) over the 3,000 checks, beside a local check's. The
 * vantages run their checks on their main thread (SITEDIAG_PROBE_THREADS=0),
 * as the baseline does here, so the difference is the engine's alone.
 */
export async function runVantageFanout(stack: BenchStack): Promise<Figure[]> {
  if (!redisAvailability().available) {
    console.warn(`scenario ${SCENARIO}: redis-server is not installed; skipped`);
    return [];
  }
  const redis = await startRedisServer();
  const services: ServiceProcess[] = [];
  let dispatcher: RedisFanout | undefined;
  const runner = diagnosticRunnerFromConfig(
    loadConfig({ SITEDIAG_PROBE_THREADS: "0", SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8", SITEDIAG_HOSTS_FILE: "/dev/null" }),
    undefined,
  );
  try {
    for (const name of VANTAGES)
      services.push(
        await stack.startService(`vantage-${name}`, {
          store: redis.url(),
          extraEnv: { SITEDIAG_VANTAGE: name, SITEDIAG_PROBE_THREADS: "0" },
        }),
      );
    dispatcher = await createRedisFanout({ location: { kind: "redis", url: redis.url() }, self: { name: "bench" }, maxJobs: 1 });
    const fanout = dispatcher;
    while ((await fanout.alive()).length < VANTAGES.length) await new Promise((resolve) => setTimeout(resolve, 50));
    const url = stack.target.url("/ok");
    const job = { kind: "site-check", raw: url, options: {} } as const;
    const fanOut = async () => {
      const entries: VantageEntry<unknown>[] = [];
      for await (const entry of fanout.run(job, VANTAGES, sharedClockMs() + 30_000, undefined)) entries.push(entry);
      return entries;
    };
    const local = () => runner.checkSite(url, undefined, {});

    const samples = stack.options.quick ? 100 : 500;
    for (let warm = 0; warm < 50; warm += 1) await Promise.all([fanOut(), local()]);
    const overhead: number[] = [];
    const runs: number[] = [];
    const singles: number[] = [];
    for (let index = 0; index < samples; index += 1) {
      // Alternate which goes first, so drift hits both.
      const order = index % 2 === 0 ? ["fan", "local"] : ["local", "fan"];
      let runMs = 0;
      let slowestMs = 0;
      for (const which of order) {
        const started = performance.now();
        if (which === "fan") {
          const entries = await fanOut();
          runMs = performance.now() - started;
          if (entries.filter((entry) => entry.state === "answered").length !== VANTAGES.length)
            throw new Error(`scenario ${SCENARIO}: a vantage did not answer`);
        } else {
          await Promise.all(VANTAGES.map(local));
          slowestMs = performance.now() - started;
        }
      }
      runs.push(runMs);
      singles.push(slowestMs);
      overhead.push(runMs - slowestMs);
    }

    // Where the overhead goes: the same runs one at a time, with Redis stamping every command (fanout-timeline.ts);
    // then runs of a URL every vantage refuses at input, whose 'away' is the engine's part alone (no check to run).
    const localAlone: number[] = [];
    const steps = await timelineOf(redis.url(), samples / 2, fanout, job, async () => {
      const started = performance.now();
      await local();
      localAlone.push(performance.now() - started);
    });
    const refusedSteps = await timelineOf(redis.url(), samples / 2, fanout, { ...job, raw: "not a url" }, async () => undefined);

    const count = 1_000;
    const cpuBefore = cpuOf(services);
    const burstStarted = performance.now();
    const burst = await Promise.all(Array.from({ length: count }, fanOut));
    const burstMs = performance.now() - burstStarted;
    const cpuFanout = cpuOf(services) - cpuBefore;
    let answered = 0;
    let unavailable = 0;
    let lost = 0;
    let duplicated = 0;
    for (const entries of burst) {
      const names = entries.map((entry) => entry.vantage.name);
      duplicated += names.length - new Set(names).size;
      lost += VANTAGES.filter((name) => !names.includes(name)).length;
      answered += entries.filter((entry) => entry.state === "answered").length;
      unavailable += entries.filter((entry) => entry.state === "unavailable").length;
    }
    const localBefore = process.cpuUsage();
    await Promise.all(Array.from({ length: count }, local));
    const localCpu = process.cpuUsage(localBefore);
    const figure = (name: string, unit: string, value: number, goal?: string): Figure => ({
      scenario: SCENARIO,
      name: `vantages: ${name}`,
      unit,
      sitediag: value,
      blackbox: null,
      ...(goal === undefined ? {} : { goal }),
    });
    return [
      figure("3-vantage run minus the slowest single check, p50", "ms", percentile(overhead, 50), "<= 3 ms"),
      figure("3-vantage run minus the slowest single check, p99", "ms", percentile(overhead, 99)),
      figure("3-vantage run, p50", "ms", median(runs)),
      figure("3 local checks at once, p50", "ms", median(singles)),
      ...steps.flatMap((step) => [
        figure(`one run at a time, under MONITOR: ${step.name}, p50`, "ms", step.p50Ms),
        figure(`one run at a time, under MONITOR: ${step.name}, p99`, "ms", step.p99Ms),
      ]),
      figure("one local check alone, p50 (what 'away' holds besides the engine)", "ms", median(localAlone)),
      ...refusedSteps
        .filter((step) => step.name === "away")
        .map((step) => figure("one run at a time, under MONITOR, a URL refused at input: away, p50", "ms", step.p50Ms)),
      figure(`${count} 3-vantage runs at once: wall time`, "ms", burstMs),
      figure(`${count} 3-vantage runs at once: entries answered`, "", answered),
      figure(`${count} 3-vantage runs at once: entries unavailable`, "", unavailable),
      figure(`${count} 3-vantage runs at once: entries lost`, "", lost, "0"),
      figure(`${count} 3-vantage runs at once: entries duplicated`, "", duplicated, "0"),
      figure("CPU per vantage check (dispatcher + worker processes, Redis not counted)", "us", cpuFanout / (count * VANTAGES.length)),
      figure("CPU per local check (in process)", "us", (localCpu.user + localCpu.system) / count),
    ];
  } finally {
    await dispatcher?.close();
    await runner.close();
    for (const service of services) await service.stop();
    await redis.close();
  }
}

/** `runs` runs of `job` one at a time under a fanout timeline, `between` after each (out of the timed run). */
async function timelineOf(
  redisUrl: string,
  runs: number,
  fanout: RedisFanout,
  job: VantageJob,
  between: () => Promise<void>,
): Promise<readonly TimelineStep[]> {
  const timeline = await watchFanout(redisUrl, vantageKeys("sitediag:").jobs, VANTAGES);
  try {
    for (let index = 0; index < runs; index += 1) {
      const startedMs = wallMs();
      const arrivals = new Map<string, number>();
      for await (const entry of fanout.run(job, VANTAGES, sharedClockMs() + 30_000, undefined)) arrivals.set(entry.vantage.name, wallMs());
      timeline.record({ startedMs, arrivals, endedMs: wallMs() });
      await between();
    }
    return await timeline.steps();
  } finally {
    await timeline.close();
  }
}

function cpuOf(services: readonly ServiceProcess[]): number {
  const own = process.cpuUsage();
  return own.user + own.system + services.reduce((sum, service) => sum + processTreeCpuMicros(service.child.pid), 0);
}
