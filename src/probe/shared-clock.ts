/**
 * Milliseconds since the epoch, fractional, on a clock every thread of the
 * process reads alike: each thread's performance.timeOrigin is its own start
 * on the epoch scale, and performance.now() counts monotonically from it. A
 * duration is always taken between two readings of one thread.
 */
export function sharedClockMs(): number {
  return performance.timeOrigin + performance.now();
}
