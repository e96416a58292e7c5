import { Code, ConnectError } from "@connectrpc/connect";
import { REDIRECT_TRACE, SITE_CHECK } from "../shared/limits.js";
import { waitUntilWords, waitWords } from "../shared/wait-words.js";
import type { Usage } from "./credit-log.js";
import type { Price } from "./call-price.js";
import { usageHeaders } from "./usage-headers.js";

/**
 * The 429 of a call its key cannot pay for now, with the usage headers of
 * every 429. It says when the call fits, as a wait a person reads and the
 * UTC time it ends, and what the credits left still pay for. A call that
 * costs more than the whole budget never fits: it gets no Retry-After (no
 * wait helps), and a batch is told how many items would fit.
 */
export function creditRefusal(
  price: Extract<Price, { kind: "credits" }>,
  usage: Usage,
  retryAfterSeconds: number | null,
  now: Date = new Date(),
): ConnectError {
  const cost = price.credits;
  const window = `the rolling ${waitWords(usage.windowSeconds)} window`;
  const left = stillPaysFor(usage.remaining);
  if (retryAfterSeconds === null) {
    const unit = price.units > 0 ? cost / price.units : cost;
    const fits = Math.floor(usage.budget / unit);
    const split = price.units > 1 && fits > 0 ? `; a batch of at most ${fits} of these items fits it` : "";
    const message = `this call costs ${cost} credits, more than the whole budget of ${usage.budget} in ${window}, so no wait makes it affordable${split}.${left}`;
    return new ConnectError(message, Code.ResourceExhausted, usageHeaders(usage));
  }
  const message =
    `this call costs ${cost} credits but ${usage.remaining} of ${usage.budget} are left in ${window}; ` +
    `it becomes affordable ${waitUntilWords(retryAfterSeconds, now)}.${left}`;
  return new ConnectError(message, Code.ResourceExhausted, usageHeaders(usage, retryAfterSeconds));
}

/** " The 3 credits left still pay for a check." when the credits left buy anything at all; "" otherwise. */
function stillPaysFor(remaining: number): string {
  const checks = Math.floor(remaining / SITE_CHECK.creditCost);
  const traces = Math.floor(remaining / REDIRECT_TRACE.creditCost);
  if (checks === 0) return "";
  const what = [count(checks, "check"), traces === 0 ? "" : count(traces, "trace")].filter((part) => part !== "").join(" or ");
  return ` The ${remaining} credit${remaining === 1 ? "" : "s"} left still pay for ${what}.`;
}

function count(n: number, noun: string): string {
  return n === 1 ? `a ${noun}` : `${n} ${noun}s`;
}
