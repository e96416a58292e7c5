import { readFileSync } from "node:fs";

/** Resident memory of a process now, in MiB, from /proc (Linux). */
export function rssMiB(pid: number): number {
  const line = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (line?.[1] === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(line[1]) / 1024;
}

/** Samples a process's RSS every few milliseconds until stopped; gives the highest seen. */
export function watchPeakRss(pid: number, everyMs = 10): { stop(): number } {
  let peak = rssMiB(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssMiB(pid));
    } catch {
      // The process is gone; the caller's own assertion says so.
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssMiB(pid));
    },
  };
}

/** How long /healthz takes to answer on this port, in ms (Infinity when it does not answer within `limitMs`). */
export async function healthzMs(baseUrl: string, limitMs = 5_000): Promise<number> {
  const started = performance.now();
  try {
    const response = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(limitMs) });
    await response.arrayBuffer();
    return response.status === 200 ? performance.now() - started : Infinity;
  } catch {
    return Infinity;
  }
}
