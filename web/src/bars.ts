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

/**
 * What a request was for. A trace's requests are its hops, then the one that
 * failed, then, when the chain ended on a 2xx page and details were asked
 * for, one extra GET of that page that looked for a client-side redirect.
 */
export type RequestRole = "hop" | "failed" | "page-read" | "request";

export interface Bar {
  readonly index: number;
  readonly role: RequestRole;
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
export function barsOf(requests: readonly RequestDetail[], hops?: number): Bar[] {
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
    const bar = { index: index + 1, role: roleOf(request, index, hops), request, startMs: start, totalMs, segments };
    start += totalMs;
    return bar;
  });
}

/** `hops`: the length of a trace's chain; undefined for a site check, whose requests are all alike. */
function roleOf(request: RequestDetail, index: number, hops: number | undefined): RequestRole {
  if (request.failure !== undefined) return "failed";
  if (hops === undefined) return "request";
  return index < hops ? "hop" : "page-read";
}
