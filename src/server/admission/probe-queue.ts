import { Code, ConnectError } from "@connectrpc/connect";
import type { ProbeLoad } from "../../runner/probe-threads.js";

/** Told when a check starts or stops waiting, and when one is turned away; metrics listen here. */
export interface ProbeQueueObserver {
  waiting(count: number): void;
  rejected(operation: string, why: "full" | "waited" | "no_thread"): void;
}

export interface ProbeQueueOptions {
  /** The probe threads' load; without it (probes in-process) nothing ever waits. */
  readonly load: ProbeLoad | undefined;
  /** SITEDIAG_PROBE_QUEUE: checks that may wait at once; 0 refuses at once while congested. */
  readonly max: number;
  /** Longest a check waits before it is refused instead. */
  readonly maxWaitMs: number;
  readonly observer?: ProbeQueueObserver;
}

/** Null: go on. Otherwise the refusal to answer with (503, Retry-After), before anything is charged. */
export interface ProbeQueue {
  /** `onTurn`: called when a check that waited is let go (not when it passes at once, nor when refused). */
  pass(operation: string, onTurn?: () => void): Promise<ConnectError | null>;
}

/** Checks let go per loop-delay report while the probe loops recover: a trickle, not the whole queue at once. */
const RELEASE_PER_REPORT = 128;
const RETRY_AFTER = "1";

/**
 * Protects the checks in flight from new ones when the probe threads' loops
 * are delayed enough to make timestamps late: a new check then waits here
 * (its wait is not part of any reported time, which the probe threads read)
 * until a report shows a loop back under the limit, in arrival order and a
 * few at a time. Beyond `max` waiting, or after `maxWaitMs`, it is refused
 * with Unavailable and a Retry-After; nothing has been charged by then.
 * While no probe thread is running at all (each dead one is being replaced)
 * a check is refused so at once: it could only fail after its charge.
 */
export function createProbeQueue(options: ProbeQueueOptions): ProbeQueue {
  const { load } = options;
  const waiting: { resolve(error: ConnectError | null): void; timer: NodeJS.Timeout; onTurn: (() => void) | undefined }[] = [];
  const refusal = (message: string) =>
    new ConnectError(`${message}; retry in ${RETRY_AFTER} second (nothing was charged)`, Code.Unavailable, { "retry-after": RETRY_AFTER });

  load?.onReport(() => {
    if (load.congested()) return;
    for (const waiter of waiting.splice(0, RELEASE_PER_REPORT)) {
      clearTimeout(waiter.timer);
      waiter.onTurn?.();
      waiter.resolve(null);
    }
    options.observer?.waiting(waiting.length);
  });

  return {
    pass(operation, onTurn) {
      if (load === undefined) return Promise.resolve(null);
      if (load.liveThreads() === 0) {
        options.observer?.rejected(operation, "no_thread");
        return Promise.resolve(refusal("no probe thread is running (a replacement is starting)"));
      }
      if (waiting.length === 0 && !load.congested()) return Promise.resolve(null);
      if (waiting.length >= options.max) {
        options.observer?.rejected(operation, "full");
        return Promise.resolve(refusal(`the probe threads are saturated and ${options.max} checks already wait`));
      }
      return new Promise((resolve) => {
        const waiter = {
          resolve,
          onTurn,
          timer: setTimeout(() => {
            const index = waiting.indexOf(waiter);
            if (index >= 0) waiting.splice(index, 1);
            options.observer?.waiting(waiting.length);
            options.observer?.rejected(operation, "waited");
            resolve(refusal(`the probe threads stayed saturated for ${options.maxWaitMs} ms`));
          }, options.maxWaitMs),
        };
        waiting.push(waiter);
        options.observer?.waiting(waiting.length);
      });
    },
  };
}
