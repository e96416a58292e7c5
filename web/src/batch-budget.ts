import { REDIRECT_TRACE, SITE_CHECK } from "../../src/shared/limits.js";
import type { Credits } from "./credits.js";
import type { Operation } from "./service.js";

// What a batch costs against what the key has left, read before it is sent
// (GET /api/v1/credits): how many rows fit, and the words for the rest.

/** Credits per item of each batch operation (the contract's prices). */
const UNIT_COSTS: Readonly<Record<Operation, number>> = { check: SITE_CHECK.creditCost, trace: REDIRECT_TRACE.creditCost };

/** How many of `count` items the credits left pay for; all of them when the credits are not known (a 429 then says what did not fit). */
export function rowsThatFit(operation: Operation, count: number, credits: Credits | undefined): number {
  return credits === undefined ? count : Math.min(count, Math.floor(credits.remaining / UNIT_COSTS[operation]));
}

export interface OverBudgetWords {
  /** The reason each row left behind shows, NOT RUN. */
  readonly reason: string;
  /** The status line. */
  readonly status: string;
  /** What fits now and how the rest can run. */
  readonly offer: string;
  /** The button's label running the first rows that fit; undefined when none does. */
  readonly first: string | undefined;
}

/**
 * A batch of `count` that the key's credits pay only `fits` of: "Not run: 14
 * traces cost 70 credits; this key has 50 of 50 left, enough for 10.", with
 * the first rows offered and, when more than the whole budget is asked, what
 * an operator can do (docs/credits.md: keys set-budget), as no wait helps then.
 */
export function overBudgetWords(operation: Operation, count: number, fits: number, credits: Credits): OverBudgetWords {
  const noun = operation === "check" ? "check" : "trace";
  const unit = UNIT_COSTS[operation];
  const whole = Math.floor(credits.limit / unit);
  const later =
    count > whole
      ? ` At most ${whole} ${noun}s fit the key's whole budget of ${credits.limit}: run the rest later from this table, or an operator can raise the budget (sitediag keys set-budget KEY_ID N).`
      : credits.resetAt === undefined
        ? " Run the rest later from this table, as credits free up."
        : ` Run the rest later from this table: credits start to free up at ${clock(credits.resetAt)}.`;
  return {
    reason: `over the budget: the key's ${credits.remaining} credits left pay for ${fits} ${noun}${fits === 1 ? "" : "s"}`,
    status: `Not run: ${count} ${noun}s cost ${count * unit} credits; this key has ${credits.remaining} of ${credits.limit} left, enough for ${fits}.`,
    offer: `${fits} of these ${count} rows fit now.${later}`,
    first: fits === 0 ? undefined : `${operation === "check" ? "Check" : "Trace"} the first ${fits} now`,
  };
}

function clock(at: Date): string {
  return `${String(at.getHours()).padStart(2, "0")}:${String(at.getMinutes()).padStart(2, "0")}`;
}
