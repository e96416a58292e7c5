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
 * Collects what one turn of this thread's loop says to the other thread and
 * sends it as one batch at the end of the turn (setImmediate: after every I/O
 * callback of the turn). A hop's timestamps are read before its answer is
 * queued, so the batch delays no measurement; it delays delivery by the rest
 * of a turn.
 */
export function batchedSender<T>(send: (batch: Batch<T>) => void): (message: T) => void {
  let pending: T[] = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    send(batch);
  };
  return (message) => {
    pending.push(message);
    if (pending.length === 1) setImmediate(flush);
  };
}
