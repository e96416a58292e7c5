import type { RequestDetail } from "../../gen/sitediag/v1/diagnostics_pb.js";

/** The phases of one request, in the order they happen. "wait" is what no phase accounts for (writing the request, the pool). */
export const PHASES = [
  { key: "dns", label: "DNS" },
  { key: "connect", label: "Connect" },
  { key: "tls", label: "TLS" },
  { key: "wait", label: "Other" },
  { key: "firstByte", label: "First byte" },
] as const;
export type PhaseKey = (typeof PHASES)[number]["key"];

export interface Bar {
  readonly index: number;
  readonly request: RequestDetail;
  /** Where the request starts on the shared axis. */
  readonly startMs: number;
  readonly totalMs: number;
  readonly segments: readonly { readonly phase: PhaseKey; readonly label: string; readonly ms: number }[];
}

/**
 * Lays the requests on one time axis. The service makes them one after the
 * other and reports each one's duration, not its start, so each bar starts
 * where the previous one ended (the few tenths of a millisecond between two
 * requests are not measured, and not drawn).
 */
export function barsOf(requests: readonly RequestDetail[]): Bar[] {
  let start = 0;
  return requests.map((request, index) => {
    const timings = request.timings;
    const totalMs = Math.max(timings?.totalMs ?? 0, request.failure?.elapsedMs ?? 0);
    const measured: Record<Exclude<PhaseKey, "wait">, number | undefined> = {
      dns: timings?.dnsMs,
      connect: timings?.connectMs,
      tls: timings?.tlsMs,
      firstByte: timings?.firstByteMs,
    };
    const known = Object.values(measured).reduce<number>((sum, ms) => sum + (ms ?? 0), 0);
    const wait = Math.max(0, totalMs - known);
    const segments = PHASES.map(({ key, label }) => ({ phase: key, label, ms: key === "wait" ? wait : (measured[key] ?? 0) })).filter((segment) => segment.ms > 0);
    const bar = { index: index + 1, request, startMs: start, totalMs, segments };
    start += totalMs;
    return bar;
  });
}
