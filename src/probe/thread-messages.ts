import type { HopRequest, ProberOptions, TimedHopOutcome } from "./hop-types.js";

/**
 * What the main thread and a probe thread say to each other. A request
 * crosses by structured clone with only what cannot be cloned replaced: the
 * URL object by its href, the AbortSignal by a cancel message. Every other
 * field, present or added later, crosses as it is, so this bridge never
 * lists the fields of a request or of an outcome.
 */
export type WireHopRequest = Omit<HopRequest, "url" | "signal"> & { readonly url: string };

/** What a probe thread is started with (its workerData). */
export interface ProbeThreadData {
  readonly options: ProberOptions;
  /** How often the thread reports its loop delay. */
  readonly reportEveryMs: number;
}

export type ToProbeThread =
  | { readonly type: "hop"; readonly id: number; readonly request: WireHopRequest }
  /**
   * A whole job of the layer above (one diagnostic, all its hops on this
   * thread), as plain data its runner reads; the probe layer does not look inside.
   */
  | { readonly type: "job"; readonly id: number; readonly job: unknown }
  /** The caller's signal aborted: end that hop or job as its signal would have. */
  | { readonly type: "cancel"; readonly id: number };

export type FromProbeThread =
  | { readonly type: "outcome"; readonly id: number; readonly outcome: TimedHopOutcome }
  | { readonly type: "answer"; readonly id: number; readonly answer: unknown }
  /** The hop or job threw on the thread: a defect of ours, never the target's doing. */
  | { readonly type: "defect"; readonly id: number; readonly message: string }
  | { readonly type: "loop-delay"; readonly p50Ms: number; readonly p99Ms: number; readonly maxMs: number }
  /** The thread has loaded its modules and built its prober: hops sent now start at once. */
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
 * callback of the turn). A hop's timestamps are read before it is queued, so
 * the batch delays no measurement; it delays delivery by the rest of a turn.
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

export function toWire(request: HopRequest): WireHopRequest {
  // Spread drops nothing the clone could carry; the two left out are replaced.
  const { url, signal: _signal, ...rest } = request;
  return Object.assign({}, rest, { url: url.href });
}

export function fromWire(wire: WireHopRequest): HopRequest {
  return Object.assign({}, wire, { url: new URL(wire.url) });
}
