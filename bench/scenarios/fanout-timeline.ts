import { Redis } from "ioredis";
import { median, percentile } from "../stats.js";

/**
 * Where a vantage run's time goes, read off Redis itself: MONITOR stamps
 * every command Redis receives (microseconds, wall clock), so one sequential
 * run after another gives, per vantage, when the dispatcher's job reached
 * Redis (its XADD to the vantage's job stream) and when that vantage's answer
 * did (its reply script's EVALSHA, whose first argument after the keys is the
 * vantage's name). With the dispatcher's own wall-clock stamps of the run's
 * start and of each entry's arrival, a run splits into:
 *
 *   send   run start -> the job's XADD received (the dispatcher encodes and sends)
 *   away   XADD -> the answer's EVALSHA received (the vantage wakes on its blocked
 *          XREADGROUP, decodes, runs the check, encodes and sends its answer)
 *   hear   EVALSHA -> the entry in the dispatcher's hands (its blocked XREAD wakes,
 *          the notice is decoded)
 *
 * `away` minus a local check of the same URL is what the vantage adds around
 * its check; the rest of the run's overhead is send + hear. MONITOR costs Redis
 * some time per command, so the sum runs a little above an unwatched run's.
 */
export interface TimelineStep {
  readonly name: "send" | "away" | "hear" | "last entry -> run ended";
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface FanoutTimeline {
  /** Run starts stamped by the dispatcher, each with the entry arrivals it saw. */
  record(run: { readonly startedMs: number; readonly arrivals: ReadonlyMap<string, number>; readonly endedMs: number }): void;
  /** The steps over every recorded run (medians per step, over every vantage of every run). */
  steps(): Promise<readonly TimelineStep[]>;
  close(): Promise<void>;
}

/** Wall clock in milliseconds with sub-millisecond precision, comparable with MONITOR's stamps. */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

interface Stamp {
  readonly atMs: number;
  readonly kind: "job" | "answer";
  readonly vantage: string;
}

export async function watchFanout(
  redisUrl: string,
  jobsKey: (vantage: string) => string,
  vantages: readonly string[],
): Promise<FanoutTimeline> {
  const client = new Redis(redisUrl, { lazyConnect: true });
  await client.connect();
  const offsetMs = await redisClockOffset(client);
  const monitor = await client.monitor();
  const stamps: Stamp[] = [];
  const byJobsKey = new Map(vantages.map((vantage) => [jobsKey(vantage), vantage]));
  monitor.on("monitor", (time: string, args: string[]) => {
    const [command = "", first = "", , , , sixth = ""] = args;
    const atMs = Number(time) * 1_000 - offsetMs;
    if (command.toUpperCase() === "XADD" && byJobsKey.has(first)) stamps.push({ atMs, kind: "job", vantage: byJobsKey.get(first) ?? "" });
    // EVALSHA sha 2 replyKey repliesKey vantage ...: the reply script of vantage-worker.ts.
    else if (command.toUpperCase() === "EVALSHA" && vantages.includes(sixth)) stamps.push({ atMs, kind: "answer", vantage: sixth });
  });

  const runs: { startedMs: number; arrivals: ReadonlyMap<string, number>; endedMs: number }[] = [];
  return {
    record: (run) => runs.push(run),
    steps: async () => {
      // MONITOR's last lines may still be on their way when the last run ends.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const send: number[] = [];
      const away: number[] = [];
      const hear: number[] = [];
      const tail: number[] = [];
      for (const run of runs) {
        const inRun = stamps.filter((stamp) => stamp.atMs >= run.startedMs - 1 && stamp.atMs <= run.endedMs + 1);
        for (const vantage of vantages) {
          const job = inRun.find((stamp) => stamp.kind === "job" && stamp.vantage === vantage);
          const answer = inRun.find((stamp) => stamp.kind === "answer" && stamp.vantage === vantage);
          const arrived = run.arrivals.get(vantage);
          if (job === undefined || answer === undefined || arrived === undefined) continue;
          send.push(job.atMs - run.startedMs);
          away.push(answer.atMs - job.atMs);
          hear.push(arrived - answer.atMs);
        }
        tail.push(run.endedMs - Math.max(...run.arrivals.values()));
      }
      const step = (name: TimelineStep["name"], values: number[]): TimelineStep => ({
        name,
        p50Ms: median(values),
        p99Ms: percentile(values, 99),
      });
      return [step("send", send), step("away", away), step("hear", hear), step("last entry -> run ended", tail)];
    },
    close: async () => {
      monitor.disconnect();
      client.disconnect();
    },
  };
}

/**
 * Redis's clock minus ours, from TIME read between two of our stamps (the
 * middle of the round trip), best of a few: MONITOR stamps with Redis's clock.
 */
async function redisClockOffset(client: Redis): Promise<number> {
  let best = { roundTripMs: Number.POSITIVE_INFINITY, offsetMs: 0 };
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const before = wallMs();
    const [seconds = "0", micros = "0"] = await client.time();
    const after = wallMs();
    const redisMs = Number(seconds) * 1_000 + Number(micros) / 1_000;
    if (after - before < best.roundTripMs) best = { roundTripMs: after - before, offsetMs: redisMs - (before + after) / 2 };
  }
  return best.offsetMs;
}
