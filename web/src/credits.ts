import { REDIRECT_TRACE, SITE_CHECK } from "../../src/shared/limits.js";

/** What the usage headers of an answer say (docs/credits.md). */
export interface Credits {
  readonly remaining: number;
  readonly limit: number;
  /** When credits free up again (the oldest charge ages out). */
  readonly resetAt: Date | undefined;
  /** Seconds to wait before the call becomes affordable, on a 429. */
  readonly retryAfterSeconds: number | undefined;
}

/** The credits of the latest answer that carried usage headers, whichever tab asked. */
let latest: { readonly credits: Credits; readonly at: Date } | undefined;

/** What the page last heard about the key's credits, and when; undefined before any answer said. */
export function latestCredits(): { readonly credits: Credits; readonly at: Date } | undefined {
  return latest;
}

/**
 * Reads the X-RateLimit-* family, or the IETF RateLimit / RateLimit-Policy
 * fields when only they came; undefined when the answer carried none (a 401
 * is refused before any charge, so it has none). Every answer's headers pass
 * through here, so it also keeps them as the latest (latestCredits), which
 * the Batch tab weighs a batch's cost against before it is sent.
 */
export function creditsOf(headers: Headers): Credits | undefined {
  const credits = readCredits(headers);
  if (credits !== undefined) latest = { credits, at: new Date() };
  return credits;
}

function readCredits(headers: Headers): Credits | undefined {
  const remaining = numberOf(headers.get("x-ratelimit-remaining")) ?? parameterOf(headers.get("ratelimit"), "r");
  const limit = numberOf(headers.get("x-ratelimit-limit")) ?? parameterOf(headers.get("ratelimit-policy"), "q");
  if (remaining === undefined || limit === undefined) return undefined;
  const resetEpoch = numberOf(headers.get("x-ratelimit-reset"));
  const resetIn = parameterOf(headers.get("ratelimit"), "t");
  const resetAt =
    resetEpoch !== undefined ? new Date(resetEpoch * 1000) : resetIn !== undefined ? new Date(Date.now() + resetIn * 1000) : undefined;
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

/** Credits per item of each batch operation (the contract's prices). */
const BATCH_UNIT_COSTS = { check: SITE_CHECK.creditCost, trace: REDIRECT_TRACE.creditCost } as const;

/**
 * What a batch of `count` URLs costs, said before it runs, weighed against
 * what the latest answer said the key has: "80 URLs: Check all costs 160
 * credits, Trace all 400. This key had 291 of 300 left at 08:31. Trace all
 * costs more than the whole budget of 300: no wait makes it affordable; at
 * most 60 traces fit in one batch."
 */
export function batchCostText(count: number, known: { readonly credits: Credits; readonly at: Date } | undefined): string {
  const check = count * BATCH_UNIT_COSTS.check;
  const trace = count * BATCH_UNIT_COSTS.trace;
  const cost = `${count} URL${count === 1 ? "" : "s"}: Check all costs ${check} credits, Trace all ${trace}.`;
  if (known === undefined) return cost;
  const { remaining, limit } = known.credits;
  const time = `${String(known.at.getHours()).padStart(2, "0")}:${String(known.at.getMinutes()).padStart(2, "0")}`;
  const parts = [cost, `This key had ${remaining} of ${limit} left at ${time}.`];
  for (const [word, total, unit] of [
    ["Check all", check, BATCH_UNIT_COSTS.check],
    ["Trace all", trace, BATCH_UNIT_COSTS.trace],
  ] as const) {
    const noun = unit === BATCH_UNIT_COSTS.check ? "checks" : "traces";
    if (total > limit)
      parts.push(
        `${word} costs more than the whole budget of ${limit}: no wait makes it affordable; at most ${Math.floor(limit / unit)} ${noun} fit in one batch.`,
      );
    else if (total > remaining) parts.push(`${word} costs more than the ${remaining} left.`);
  }
  return parts.join(" ");
}
