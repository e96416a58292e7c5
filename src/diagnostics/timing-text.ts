// Durations as people read them, in the CLI and on the page alike (the page
// bundles this file): one rounding rule, one set of phase names, one sentence
// for how far a failed request got.

/**
 * A measured duration: the probe's figure, a multiple of 0.1 ms, shown as it
 * is with one decimal ("0.8 ms", "6000.4 ms"), never rounded further, so
 * the phases printed in a row add up to the total printed beside them.
 */
export function formatMs(ms: number): string {
  return `${ms.toFixed(1)} ms`;
}

/** A contract figure (responseTime, totalTimeMs, responseTimeMs): whole milliseconds, the measured sum rounded half up. */
export function formatWholeMs(ms: number): string {
  return `${Math.round(ms)} ms`;
}

/** The phases of a request that add up to its total, in that order, with the names every view gives them. */
export const TIMING_PHASES = [
  { key: "dnsMs", label: "DNS", column: "dns" },
  { key: "connectMs", label: "Connect", column: "connect" },
  { key: "tlsMs", label: "TLS", column: "tls" },
  { key: "waitingMs", label: "Waiting", column: "waiting" },
  { key: "receivingMs", label: "Receiving", column: "receiving" },
  { key: "otherMs", label: "Other", column: "other" },
] as const;

export type TimingPhaseKey = (typeof TIMING_PHASES)[number]["key"];

/** A request's timings as either record carries them: null (the diagnostics) or undefined (the API's message) for a phase that did not happen. */
export type TimingFacts = { readonly [key in TimingPhaseKey]?: number | null | undefined } & { readonly totalMs: number };

export interface FailureFacts {
  /** dns, connect, tls or http. */
  readonly stage: string;
  readonly timedOut: boolean;
}

/**
 * How far a failed request got, in words: "connected in 0.8 ms, then no
 * response in 6000.1 ms"; "DNS in 1.2 ms, then connect failed after 0.3 ms".
 */
export function failureStory(failure: FailureFacts, timings: TimingFacts, reused: boolean): string {
  const done: string[] = [];
  const { dnsMs, connectMs, tlsMs, waitingMs } = timings;
  const reached = (ms: number | null | undefined): ms is number => ms !== null && ms !== undefined;
  if (failure.stage === "dns") return `${failure.timedOut ? "no DNS answer" : "DNS failed"} after ${formatMs(dnsMs ?? timings.totalMs)}`;
  if (reused) done.push("on the connection the redirect before kept");
  if (reached(connectMs) && failure.stage !== "connect") done.push(`connected in ${formatMs(connectMs)}`);
  if (reached(tlsMs) && failure.stage !== "tls") done.push(`TLS done in ${formatMs(tlsMs)}`);
  const last = lastStep(failure, failure.stage === "connect" ? connectMs : failure.stage === "tls" ? tlsMs : waitingMs, timings.totalMs);
  return done.length === 0 ? last : `${done.join(", ")}, then ${last}`;
}

function lastStep(failure: FailureFacts, ms: number | null | undefined, totalMs: number): string {
  const took = formatMs(ms ?? totalMs);
  if (failure.stage === "connect") return failure.timedOut ? `no connection in ${took}` : `connecting failed after ${took}`;
  if (failure.stage === "tls") return failure.timedOut ? `no TLS handshake in ${took}` : `the TLS handshake failed after ${took}`;
  return failure.timedOut ? `no response in ${took}` : `the response failed after ${took}`;
}
