// Time as the probe reads it: the clocks a hop and a call are timed on, and the deadlines that end them.

/**
 * Milliseconds since the epoch, fractional, on a clock every thread of the
 * process reads alike: each thread's performance.timeOrigin is its own start
 * on the epoch scale, and performance.now() counts monotonically from it. A
 * duration is always taken between two readings of one thread.
 */
export function sharedClockMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Monotonic milliseconds, fractional, on this thread's own clock: what a hop's trace is timed on. */
export function now(): number {
  return performance.now();
}

/**
 * What the probe and the diagnostics read of the end of a hop or of a whole
 * diagnostic: whether it has come and why, and a listener for when it does.
 * An AbortSignal is one; so is a Deadline's.
 */
export interface AbortWatch {
  readonly aborted: boolean;
  /** What abort was called with; undefined before. */
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** Ends one hop (its timeout, or the caller's cancel) or one diagnostic (a cancel message). An AbortController is one too. */
export interface Deadline {
  readonly signal: AbortWatch;
  abort(reason?: unknown): void;
}

/**
 * A hop's deadline without an AbortSignal. Creating an AbortSignal sets up
 * an EventTarget for the whole web API, and every hop needs one that nothing
 * outside the probe ever sees: signal creation and its listeners were a
 * visible share of the probe thread's busy time (docs/benchmarks.md). This
 * keeps what the probe uses of
 * one: `aborted`, `reason`, and listeners that run once, in order, when it
 * aborts (none when added after). A listener that throws is reported as an
 * uncaught exception, as an EventTarget's is, after the others have run.
 * A probe thread ends a whole diagnostic with one too (its cancel message).
 */
export function createDeadline(): Deadline {
  return new HopDeadline();
}

class HopDeadline implements Deadline, AbortWatch {
  #aborted = false;
  #reason: unknown = undefined;
  #listeners: (() => void)[] = [];

  get signal(): AbortWatch {
    return this;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  addEventListener(_type: "abort", listener: () => void): void {
    if (!this.#aborted) this.#listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const index = this.#listeners.indexOf(listener);
    if (index >= 0) this.#listeners.splice(index, 1);
  }

  abort(reason?: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        process.nextTick(() => {
          throw error;
        });
      }
    }
  }
}

/**
 * Calls `fire` once no less than `ms` after this call, as this thread's
 * clock (now()) counts. A plain setTimeout can fire up to a millisecond early
 * by that count: libuv arms it from the loop's cached time, taken when the
 * loop turn began, not from the moment of the call. A timeout is a promise
 * to the target (its whole time on the wire, or the verdict is ours), so a
 * timer that comes early is set again for what is left.
 *
 * And a timer that comes late (this thread was busy or not scheduled) must not
 * beat what the target already sent: libuv runs a turn's due timers before it
 * reads the sockets, so an answer that reached us in time but waited for the
 * thread would lose to the timer. `fire` runs in the same turn's check phase
 * instead (setImmediate), after that turn has read every socket that is ready;
 * an answer read then settles the hop, and its clear() stops `fire`.
 */
export function fullTimeout(ms: number, fire: () => void): { clear(): void } {
  const dueAt = now() + ms;
  let timer: NodeJS.Timeout | undefined;
  let last: NodeJS.Immediate | undefined;
  const check = () => {
    const left = dueAt - now();
    if (left > 0) timer = setTimeout(check, Math.ceil(left));
    else last = setImmediate(fire);
  };
  timer = setTimeout(check, ms);
  return {
    clear: () => {
      clearTimeout(timer);
      clearImmediate(last);
    },
  };
}
