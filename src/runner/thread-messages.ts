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
 * Collects what one turn of this thread's loop says to the other thread and
 * sends it as one batch at the end of the turn (setImmediate: after every I/O
 * callback of the turn), or as soon as MAX_BATCH are waiting. A hop's
 * timestamps are read before its answer is queued, so the batch delays no
 * measurement; it delays delivery by the rest of a turn at most.
 */
export function batchedSender<T>(send: (batch: Batch<T>) => void): (message: T) => void {
  let pending: T[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    send(batch);
  };
  return (message) => {
    pending.push(message);
    if (pending.length >= MAX_BATCH) {
      const batch = pending;
      pending = [];
      send(batch);
    } else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}
