import type { HopOutcome, HopTimings } from "../../probe/hop-types.js";

/** The phase columns every request table shows, in the order they happen. */
export const PHASE_HEADINGS = ["dns", "connect", "tls", "first byte", "total"] as const;

/**
 * Milliseconds for people: one decimal under 10 ms, where loopback and LAN
 * timings live, whole numbers above. "-" for a phase that did not happen.
 */
export function formatMs(ms: number | null): string {
  if (ms === null) return "-";
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

/** Phase cells of one request: every phase for a response; for a failure only the time until it was known. */
export function phaseCells(outcome: HopOutcome | undefined): string[] {
  if (outcome?.kind === "response") return timingCells(outcome.response.timings, outcome.response.connectionReused);
  if (outcome?.kind === "failure") return ["-", "-", "-", "-", formatMs(outcome.failure.elapsedMs)];
  return ["-", "-", "-", "-", "-"];
}

/** A request over the connection the redirect before it kept says so where its dial would be. */
function timingCells(timings: HopTimings, reused: boolean): string[] {
  return [formatMs(timings.dnsMs), reused ? "reused" : formatMs(timings.connectMs), formatMs(timings.tlsMs), formatMs(timings.firstByteMs), formatMs(timings.totalMs)];
}
