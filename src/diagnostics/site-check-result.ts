import type { Overload } from "../probe/overload.js";
import type { FailureStage, PolicyRefusal } from "../failures.js";
import type { DiagnosticDetails } from "./details-types.js";
import type { RequestAttempt } from "./request-attempt.js";

/** One redirecting response (spec §2.2 redirectHops item). */
export interface SiteRedirectHop {
  readonly url: string;
  readonly status: number;
}

/** One request the check made (or had refused), kept for callers that show more than the contract. */
export type SiteCheckAttempt = RequestAttempt;

/** Spec §2.2, field for field, with null where the contract says null, plus detail for a CLI. */
export interface SiteCheckResult {
  /** The caller's string, exactly as given. */
  readonly requestedUrl: string;
  readonly finalUrl: string | null;
  readonly status: "up" | "down";
  readonly statusCode: number | null;
  readonly statusText: string | null;
  /** Whole milliseconds: the sum of every request's own time, each read on the loop that ran it. */
  readonly responseTime: number | null;
  readonly reason: string | null;
  readonly failedStage: FailureStage | null;
  readonly redirectHops: readonly SiteRedirectHop[] | null;
  readonly proxyBlocked: boolean;
  /** The provider behind proxyBlocked; null when proxyBlocked is false. */
  readonly proxyProvider: string | null;
  /** Every request in order, with its full outcome (timings, addresses, TLS). */
  readonly attempts: readonly SiteCheckAttempt[];
  /** Only when the check was asked for details: absent otherwise, so the plain result keeps its shape. */
  readonly details?: DiagnosticDetails;
}

/**
 * A check ran (whatever the target's state), or its input was refused before
 * anything was sent to the target (a 400 naming the rule), or the caller's
 * signal ended it, or our own capacity kept it from a verdict (`overloaded`:
 * retryable, never a word about the target). The same outcomes as redirect-check's.
 */
export type SiteCheckOutcome =
  | { readonly kind: "result"; readonly result: SiteCheckResult }
  | { readonly kind: "refused"; readonly refusal: PolicyRefusal }
  | { readonly kind: "cancelled"; readonly reason: unknown }
  | { readonly kind: "overloaded"; readonly overload: Overload };
