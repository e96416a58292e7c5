import type { Usage } from "./credit-log.js";

/** The quota name in the IETF RateLimit fields. */
const POLICY_NAME = "credits";

/**
 * The usage headers sent with every 200 and 429, on both doors: the IETF
 * draft RateLimit-Policy / RateLimit fields and the widely used X-RateLimit-*
 * family. A 429 adds Retry-After.
 */
export function usageHeaders(usage: Usage, retryAfterSeconds?: number): Headers {
  return setUsageHeaders(new Headers(), usage, retryAfterSeconds);
}

/**
 * Sets the usage headers on `into` and returns it. A charged call's answer
 * gets them written straight into its response headers: building a Headers
 * of their own first and copying it over cost a second validation of each
 * and a sort, on every call.
 */
export function setUsageHeaders(into: Headers, usage: Usage, retryAfterSeconds?: number): Headers {
  into.set("RateLimit-Policy", `"${POLICY_NAME}";q=${usage.budget};w=${usage.windowSeconds}`);
  into.set("RateLimit", `"${POLICY_NAME}";r=${usage.remaining};t=${usage.resetSeconds}`);
  into.set("X-RateLimit-Limit", String(usage.budget));
  into.set("X-RateLimit-Remaining", String(usage.remaining));
  into.set("X-RateLimit-Used", String(usage.used));
  into.set("X-RateLimit-Reset", String(usage.resetAtEpochSeconds));
  if (retryAfterSeconds !== undefined) into.set("Retry-After", String(retryAfterSeconds));
  return into;
}

/** Every header usageHeaders may set, for CORS Access-Control-Expose-Headers. */
export const USAGE_HEADER_NAMES: readonly string[] = [
  "RateLimit-Policy",
  "RateLimit",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Used",
  "X-RateLimit-Reset",
  "Retry-After",
];
