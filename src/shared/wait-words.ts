// How long to wait, as people read it: the service's 429 message and the
// page's refusal both say "in 23 h 59 min (at 03:30 UTC)", never raw seconds.

/** A wait in whole seconds as hours and minutes, rounded up to the minute past one: "23 h 59 min", "5 min", "40 s". */
export function waitWords(seconds: number): string {
  const whole = Math.max(0, Math.ceil(seconds));
  if (whole < 60) return `${whole} s`;
  const minutes = Math.ceil(whole / 60);
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  if (hours === 0) return `${rest} min`;
  return rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
}

/**
 * The moment as a UTC clock time, "03:30 UTC", with the date in front when
 * it is not the day of `now` ("2026-11-27 03:30 UTC"), so a time a day away
 * is never read as today's.
 */
export function utcClockWords(at: Date, now: Date): string {
  const iso = at.toISOString();
  const time = `${iso.slice(11, 16)} UTC`;
  return iso.slice(0, 10) === now.toISOString().slice(0, 10) ? time : `${iso.slice(0, 10)} ${time}`;
}

/**
 * "in 23 h 59 min (at 2026-11-27 03:30 UTC)": a wait from `now`, and the
 * moment it ends. Both round up (the moment to its next minute), so whoever
 * waits as told is never early.
 */
export function waitUntilWords(seconds: number, now: Date): string {
  const end = now.getTime() + Math.max(0, Math.ceil(seconds)) * 1000;
  return `in ${waitWords(seconds)} (at ${utcClockWords(new Date(Math.ceil(end / 60_000) * 60_000), now)})`;
}
