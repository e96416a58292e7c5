/** What the usage headers of an answer say (docs/credits.md). */
export interface Credits {
  readonly remaining: number;
  readonly limit: number;
  /** When credits free up again (the oldest charge ages out). */
  readonly resetAt: Date | undefined;
  /** Seconds to wait before the call becomes affordable, on a 429. */
  readonly retryAfterSeconds: number | undefined;
}

/**
 * Reads the X-RateLimit-* family, or the IETF RateLimit / RateLimit-Policy
 * fields when only they came; undefined when the answer carried none (a 401
 * is refused before any charge, so it has none).
 */
export function creditsOf(headers: Headers): Credits | undefined {
  const remaining = numberOf(headers.get("x-ratelimit-remaining")) ?? parameterOf(headers.get("ratelimit"), "r");
  const limit = numberOf(headers.get("x-ratelimit-limit")) ?? parameterOf(headers.get("ratelimit-policy"), "q");
  if (remaining === undefined || limit === undefined) return undefined;
  const resetEpoch = numberOf(headers.get("x-ratelimit-reset"));
  const resetIn = parameterOf(headers.get("ratelimit"), "t");
  const resetAt = resetEpoch !== undefined ? new Date(resetEpoch * 1000) : resetIn !== undefined ? new Date(Date.now() + resetIn * 1000) : undefined;
  return { remaining, limit, resetAt, retryAfterSeconds: numberOf(headers.get("retry-after")) };
}

function numberOf(text: string | null): number | undefined {
  if (text === null || !/^\d+$/.test(text.trim())) return undefined;
  return Number(text.trim());
}

/** One integer parameter of a structured field such as `"credits";r=298;t=86400`. */
function parameterOf(field: string | null, name: string): number | undefined {
  if (field === null) return undefined;
  const match = new RegExp(`;\\s*${name}=(\\d+)`).exec(field);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}
