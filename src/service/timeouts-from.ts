import { createContextKey, type HandlerContext } from "@connectrpc/connect";

/**
 * When a call's timeouts start, on the shared clock (probe/shared-clock.ts):
 * its arrival, or, when it waited for a turn on the probe threads, the end of
 * that wait. A caller told "6 s per request" expects the answer 6 s after
 * asking, so the time the service spent taking the call in (its key, its
 * charge; a burst of a thousand calls queues there for hundreds of
 * milliseconds) comes out of the first request's timeout. The wait for a turn
 * does not: it is the service holding the check back, not the site being slow.
 * Set by the HTTP layer on every door; absent when a handler is called directly.
 */
export interface CallClock {
  readonly timeoutsFrom: number;
}

export const callClockKey = createContextKey<CallClock | undefined>(undefined, { description: "when the call's timeouts start" });

export function timeoutsFromOf(context: HandlerContext): number | undefined {
  return context.values.get(callClockKey)?.timeoutsFrom;
}
