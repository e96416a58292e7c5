import type { FailureStage } from "../probe/failure.js";
import type { DiagnosticOutcome } from "./diagnostic-call.js";
import type { DiagnosticDetails } from "./details-types.js";

/** One redirecting response (spec §2.2 redirectHops item). */
export interface SiteRedirectHop {
  readonly url: string;
  readonly status: number;
}

/** Spec §2.2, field for field, with null where the contract says null. */
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
  /** Only when the check was asked for details: absent otherwise, so the plain result keeps its shape. */
  readonly details?: DiagnosticDetails;
}

/** How a check ends (diagnostic-call.ts): its result, or a refusal of its input, a cancellation or our own overload. */
export type SiteCheckOutcome = DiagnosticOutcome<SiteCheckResult>;
