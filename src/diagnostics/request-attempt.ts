import type { HopOutcome } from "../probe/hop-types.js";

/**
 * One request a diagnostic made (or had refused by the target policy), with
 * the prober's full outcome: what callers that show more than the contract
 * (the CLI's tables) read, in both diagnostics alike. For redirect-check there
 * is one per chain position: the request whose answer the position reports.
 */
export interface RequestAttempt {
  readonly url: string;
  readonly method: "GET" | "HEAD";
  readonly outcome: HopOutcome;
}
