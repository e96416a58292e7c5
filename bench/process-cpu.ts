import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc/PID/stat's utime and stime (USER_HZ; 100 on every Linux build we run). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system) spent so far by a process and all its live
 * descendants (a cluster's workers, a tool's helpers), in microseconds, from
 * /proc. Read before and after a run, the difference is what the run cost
 * the process tree, whatever else the machine was doing.
 */
export function processTreeCpuMicros(rootPid: number): number {
  const children = childrenByParent();
  let ticks = 0;
  const pending = [rootPid];
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    ticks += ownTicks(pid) ?? 0;
    pending.push(...(children.get(pid) ?? []));
  }
  return micros(ticks);
}

/**
 * CPU time (user + system) of each live thread of one process so far, in
 * microseconds by thread id (/proc/PID/task/TID/stat): the process's own
 * thread has the process's id. Read before and after a run, it splits a
 * process's cost between its threads (a service's main thread, its probe
 * thread, V8's helper threads). Threads that ended meanwhile are not in it.
 */
export function threadCpuMicros(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads; // the process is gone
  }
  for (const tid of tids) {
    const ticks = ownTicks(pid, Number(tid));
    if (ticks !== undefined) threads.set(Number(tid), micros(ticks));
  }
  return threads;
}

/** A process's (or one of its threads') user + system clock ticks; undefined once it is gone. */
function ownTicks(pid: number, tid?: number): number | undefined {
  const fields = statFields(pid, tid);
  // utime and stime are fields 14 and 15 of stat(5); after the ")" of the command they are the 12th and 13th.
  return fields === undefined ? undefined : Number(fields[11]) + Number(fields[12]);
}

function micros(ticks: number): number {
  return (ticks / TICKS_PER_SECOND) * 1_000_000;
}

function childrenByParent(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = Number(statFields(Number(entry))?.[1]);
    if (!Number.isFinite(parent)) continue;
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  return children;
}

/** The fields of /proc/PID/stat (or of one of its threads) after the command name (which may itself hold spaces and parentheses). */
function statFields(pid: number, tid?: number): string[] | undefined {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined; // gone between the listing and the read
  }
}
