import type { ProberOptions } from "../probe/hop-types.js";

/*
 * What the main thread and a probe thread say to each other. A job and its
 * answer cross by structured clone as they are, plain data; the caller's
 * AbortSignal, which cannot cross, is replaced by a cancel message.
 */

/** What a probe thread is started with (its workerData). */
export interface ProbeThreadData {
  readonly options: ProberOptions;
  /** How often the thread reports its loop delay. */
  readonly reportEveryMs: number;
}

export type ToProbeThread =
  /** A whole job (one diagnostic, all its hops on this thread), as plain data the thread's job runner reads; the threads do not look inside. */
  | { readonly type: "job"; readonly id: number; readonly job: unknown }
  /** The caller's signal aborted: end that job as its signal would have. */
  | { readonly type: "cancel"; readonly id: number };

export type FromProbeThread =
  | { readonly type: "answer"; readonly id: number; readonly answer: unknown }
  /** The job threw on the thread: a defect of ours, never the target's doing. */
  | { readonly type: "defect"; readonly id: number; readonly message: string }
  | { readonly type: "loop-delay"; readonly p50Ms: number; readonly p99Ms: number; readonly maxMs: number }
  /** The thread has loaded its modules and built its prober: jobs sent now start at once. */
  | { readonly type: "ready" };

/**
 * Messages cross in batches: everything one loop turn has to say goes as one
 * postMessage (one wake-up of the other thread, one message event) instead
 * of one each: the wake-up, not the bytes, is what the bridge costs
 * (figures: docs/benchmarks.md).
 */
export type Batch<T> = readonly T[];

/**
 * The most messages one batch holds: a batch this full is sent at once,
 * without waiting for the end of the turn. A burst of a thousand calls is
 * taken in within one turn of the main loop, which lasts as long as their
 * intake (hundreds of milliseconds on a loaded machine); sent only at its end,
 * the first calls' jobs would wait for the last call's intake while the probe
 * thread idled. In batches of this size the probe thread starts the first
 * hops while the rest are still taken in, and a wake-up still carries dozens
 * of messages (figures: docs/benchmarks.md).
 */
export const MAX_BATCH = 64;

/**
 * How long a probe thread's answer waits for others to go with it, while
 * that thread is busy (BUSY_UTILIZATION) with other jobs in flight. A TLS
 * handshake is a few milliseconds of a probe thread's CPU, so a busy one
 * finishes about one job a turn: sent a turn at a time, each answer cost a
 * postMessage there and a wake-up of the main thread, which then answered one
 * call cold. Held 5 ms, answers go several at once: less CPU per HTTPS check
 * (docs/benchmarks.md), for at most 5 ms more before a caller hears from a
 * thread that is the service's bottleneck anyway; hop times are read before.
 * A thread that is not busy (plain HTTP: each job a fraction of a
 * millisecond) answers at the end of the turn: there the hold only made
 * every call wait, 17% fewer checks a second at -c32.
 */
export const ANSWER_HOLD_MS = 5;

/** The share of its recent time a probe thread's loop spent working (not waiting in epoll) from which it counts as busy. */
export const BUSY_UTILIZATION = 0.8;

/** The hold of an answer queued while `inFlight` jobs (its own included) are on its thread, whose loop was `utilization` busy of late. */
export function answerHoldMs(inFlight: number, utilization: number): number {
  return inFlight > 1 && utilization >= BUSY_UTILIZATION ? ANSWER_HOLD_MS : 0;
}

/**
 * This thread's event-loop utilization (performance.eventLoopUtilization)
 * over its last whole window of `windowMs`, taken by a timer that does not
 * keep the thread alive: a reading is then the last window's, however long
 * ago the one before it was asked.
 */
export function recentUtilization(windowMs: number): () => number {
  let mark = performance.eventLoopUtilization();
  let utilization = 0;
  setInterval(() => {
    utilization = performance.eventLoopUtilization(mark).utilization;
    mark = performance.eventLoopUtilization();
  }, windowMs).unref();
  return () => utilization;
}

export interface BatchOptions {
  /**
   * How long a batch started now may wait for more messages before it goes,
   * asked once per batch, when its first message is queued: 0 (the default)
   * sends it at the end of the turn.
   */
  readonly holdMs?: () => number;
}

/**
 * Collects what one turn of this thread's loop says to the other thread and
 * sends it as one batch at the end of the turn (setImmediate: after every I/O
 * callback of the turn), or after `holdMs` when that asks for longer, or as
 * soon as MAX_BATCH are waiting. A hop's timestamps are read before its
 * answer is queued, so the batch delays no measurement; it delays delivery by
 * the rest of a turn, or by the hold, at most.
 */
export function batchedSender<T>(send: (batch: Batch<T>) => void, options: BatchOptions = {}): (message: T) => void {
  const holdMs = options.holdMs ?? noHold;
  let pending: T[] = [];
  /** Cancels the send scheduled for the batch being collected; undefined while none is. */
  let unschedule: (() => void) | undefined;
  const flush = () => {
    unschedule?.();
    unschedule = undefined;
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    send(batch);
  };
  return (message) => {
    pending.push(message);
    // Full: it goes now, and the next message starts a batch of its own, with a hold of its own.
    if (pending.length >= MAX_BATCH) flush();
    else if (unschedule === undefined) {
      const hold = holdMs();
      if (hold > 0) {
        const timer = setTimeout(flush, hold);
        unschedule = () => clearTimeout(timer);
      } else {
        const immediate = setImmediate(flush);
        unschedule = () => clearImmediate(immediate);
      }
    }
  };
}

function noHold(): number {
  return 0;
}
