import { readdirSync, readFileSync } from "node:fs";

/**
 * How long each thread of a process has run and has waited to run, from
 * Linux's /proc/PID/task/TID/schedstat (nanoseconds on a CPU, nanoseconds
 * runnable on a run queue, time slices). A loop's delay measured in wall time
 * holds both: the work it did, and the time the machine gave its core to
 * others. A test that blames a delay on our own code takes the second part
 * off first, as measured, rather than assuming an idle machine.
 */
export interface ThreadSchedule {
  readonly runNs: number;
  readonly waitNs: number;
}

/** Every thread's schedule now (this process's by default); empty where the kernel shows none. */
export function threadSchedules(pid: number | "self" = "self"): Map<number, ThreadSchedule> {
  const schedules = new Map<number, ThreadSchedule>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return schedules; // not Linux, or the process is gone
  }
  for (const tid of tids) {
    const schedule = scheduleOf(`/proc/${pid}/task/${tid}/schedstat`);
    if (schedule !== undefined) schedules.set(Number(tid), schedule);
  }
  return schedules;
}

/** The thread reading: /proc/thread-self names it, whichever thread of the process that is. */
export function ownThreadId(): number | undefined {
  try {
    return Number(readFileSync("/proc/thread-self/stat", "utf8").split(" ", 1)[0]);
  } catch {
    return undefined;
  }
}

/** What one thread did between two readings, in milliseconds. */
export interface ThreadSpan {
  readonly tid: number;
  readonly ranMs: number;
  readonly waitedMs: number;
}

/**
 * The thread that ran the most between `before` and `after`, leaving out
 * `exclude` (the test's own thread): while one case runs alone, the probe
 * thread running it. Undefined when no thread is shown.
 */
export function busiestThread(
  before: ReadonlyMap<number, ThreadSchedule>,
  after: ReadonlyMap<number, ThreadSchedule>,
  exclude?: number,
): ThreadSpan | undefined {
  let busiest: ThreadSpan | undefined;
  for (const [tid, end] of after) {
    if (tid === exclude) continue;
    const start = before.get(tid) ?? { runNs: 0, waitNs: 0 };
    const span = { tid, ranMs: (end.runNs - start.runNs) / 1e6, waitedMs: Math.max(0, end.waitNs - start.waitNs) / 1e6 };
    if (busiest === undefined || span.ranMs > busiest.ranMs) busiest = span;
  }
  return busiest;
}

function scheduleOf(path: string): ThreadSchedule | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined; // the thread ended meanwhile
  }
  const [run, wait] = text.trim().split(" ").map(Number);
  if (run === undefined || wait === undefined || !Number.isFinite(run) || !Number.isFinite(wait)) return undefined;
  return { runNs: run, waitNs: wait };
}
