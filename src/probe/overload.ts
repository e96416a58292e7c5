import { sharedClockMs } from "./clock.js";

/**
 * Why a check got no verdict from us: the service's own capacity failed it,
 * not the target. A value every layer passes on as it is (a hop outcome, a
 * diagnostic outcome) until the service answers it once, as a retryable 503
 * that is not charged.
 *
 * - `late_start`: the check waited in our own queues for longer than
 *   LATE_START_GRACE_MS, so its target could no longer be given its full
 *   time; decided before any byte was sent.
 * - `thread_lost`: the probe thread running it died with it in flight (what
 *   it had sent may have reached the target; its answer is lost).
 * - `no_thread`: no probe thread was running to take it; nothing was sent.
 * - `overrun`: a trace's own work between its requests (not the target's
 *   time on the wire) ran past its budget by more than LATE_START_GRACE_MS.
 */
export type OverloadWhy = "late_start" | "thread_lost" | "no_thread" | "overrun";

export interface Overload {
  readonly why: OverloadWhy;
  /** For people (the answer's message, the log); never parsed. */
  readonly detail: string;
}

/**
 * How long a check may wait for its turn (main thread intake, a probe
 * thread's queue, a booting thread) and still be run with its full time.
 * Honest verdicts need the target to have had its whole per-request time on
 * the wire, so a check that starts late gets that whole time from its start,
 * and the caller hears up to this much after the timeout they know. Beyond
 * it the caller is better told to retry now than made to wait a full timeout
 * more: the check is answered as overload. One second: 1,000 silent checks
 * at once start within about half a second (docs/benchmarks.md), while the
 * wait this guards against was seconds (a thread booting or held).
 */
export const LATE_START_GRACE_MS = 1_000;

/** The overload a check asked for at `askedAt` (shared clock) meets when it starts now; null when it may start with its full time. */
export function lateStart(askedAt: number | undefined): Overload | null {
  if (askedAt === undefined) return null;
  const waited = sharedClockMs() - askedAt;
  if (waited <= LATE_START_GRACE_MS) return null;
  return { why: "late_start", detail: `it waited ${Math.round(waited)} ms to start, more than ${LATE_START_GRACE_MS} ms` };
}
