import type { Usage } from "./credit-log.js";

/** The quota name in the IETF RateLimit fields. */
const POLICY_NAME = "credits";

/**
 * The usage headers sent with every 200 and 429, on both doors: the IETF
 * draft RateLimit-Policy / RateLimit fields and the widely used X-RateLimit-*
 * family. A 429 adds Retry-After.
 */
export function usageHeaders(usage: Usage, retryAfterSeconds?: number): Headers {
  const headers = new Headers({
    "RateLimit-Policy": `"${POLICY_NAME}";q=${usage.budget};w=${usage.windowSeconds}`,
    RateLimit: `"${POLICY_NAME}";r=${usage.remaining};t=${usage.resetSeconds}`,
    "X-RateLimit-Limit": String(usage.budget),
    "X-RateLimit-Remaining": String(usage.remaining),
    "X-RateLimit-Used": String(usage.used),
    "X-RateLimit-Reset": String(usage.resetAtEpochSeconds),
  });
  if (retryAfterSeconds !== undefined) headers.set("Retry-After", String(retryAfterSeconds));
  return headers;
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
