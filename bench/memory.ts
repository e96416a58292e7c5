import { readFileSync } from "node:fs";

/** Resident memory of a process from /proc/PID/status, in bytes: now (VmRSS) and its peak so far (VmHWM). */
export interface ProcessMemory {
  readonly rssBytes: number;
  readonly peakRssBytes: number;
}

export function readProcessMemory(pid: number): ProcessMemory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return { rssBytes: field(status, "VmRSS"), peakRssBytes: field(status, "VmHWM") };
}

function field(status: string, name: string): number {
  const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, "m").exec(status);
  if (match === null) throw new Error(`/proc status has no ${name}`);
  return Number(match[1]) * 1_024;
}

/** Samples VmRSS every `intervalMs` until stopped; returns the highest sample. */
export function sampleRss(pid: number, intervalMs = 50): { stop(): number } {
  let peak = readProcessMemory(pid).rssBytes;
  const timer = setInterval(() => {
    peak = Math.max(peak, readProcessMemory(pid).rssBytes);
  }, intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, readProcessMemory(pid).rssBytes);
    },
  };
}

export const MIB = 1_024 * 1_024;
