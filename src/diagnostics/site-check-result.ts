import { causeInfo, outcomeCause, refusalCause } from "../shared/failures.js";
import type { FailureStage } from "../shared/failures.js";
import type { ProbeFailure } from "../probe/failure.js";
import type { RefusalRule } from "../shared/failures.js";
import type { DiagnosticDetails } from "./diagnostic-details.js";
import type { DiagnosticOutcome } from "./diagnostic-call.js";

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

// The `reason` texts that are is-site-down's own (spec §2.2: "complete list:
// not shown"): server answers, redirect defects and refusals, and timeouts,
// which name the configured timeout. Every other failure reads the probe's
// sentence (`ProbeFailure.reason`, from src/probe/failure-causes.ts). A reason
// is chosen from the structured outcome; nothing matches these strings later.

/** A timeout: what we were waiting for at each stage. */
const TIMEOUT_WAITS: Readonly<Record<FailureStage, string>> = {
  dns: "resolving the host name",
  connect: "connecting to the server",
  tls: "during the TLS handshake",
  http: "waiting for a response",
};

/** A redirect whose target the target policy refused, per rule: the sentences of the failure table's refusal rows. */
export const REDIRECT_REFUSAL_REASONS: Readonly<Record<Exclude<RefusalRule, "no_address">, string>> = {
  non_public_address: refusalCause("non_public_address").reason,
  bad_port: refusalCause("bad_port").reason,
  port: refusalCause("port").reason,
  credentials: refusalCause("credentials").reason,
  url_too_long: refusalCause("url_too_long").reason,
  scheme: refusalCause("scheme").reason,
  invalid_url: refusalCause("invalid_url").reason,
};

/** A name that resolved to no address at all is a DNS failure, not a policy matter. */
export const NO_ADDRESS_REASON = causeInfo("ENODATA", "dns").reason;

export const REDIRECT_DEFECT_REASONS = {
  missingLocation: outcomeCause("REDIRECT_MISSING_LOCATION").reason,
  unparsableLocation: outcomeCause("REDIRECT_INVALID_LOCATION").reason,
  nonHttpLocation: REDIRECT_REFUSAL_REASONS.scheme,
} as const;

/** The stable code of each redirect defect. */
export const REDIRECT_DEFECT_CODES: Readonly<Record<keyof typeof REDIRECT_DEFECT_REASONS, string>> = {
  missingLocation: outcomeCause("REDIRECT_MISSING_LOCATION").code,
  unparsableLocation: outcomeCause("REDIRECT_INVALID_LOCATION").code,
  nonHttpLocation: refusalCause("scheme").code,
};

export type RedirectDefect = keyof typeof REDIRECT_DEFECT_REASONS;

export function serverErrorReason(status: number, statusText: string): string {
  return `Server returned ${status} ${statusText}`.trimEnd();
}

export function tooManyRedirectsReason(maxRequests: number): string {
  return `Too many redirects: still redirecting after ${maxRequests} requests`;
}

/** A timeout this much short of the allowance (or 5% of it) was not ours: timers and clocks differ by less. */
const EARLY_MARGIN_MS = 100;

/** Who gives up before the check's own timeout, by stage. */
const GAVE_UP_FIRST: Readonly<Record<ProbeFailure["stage"], string>> = {
  dns: "the resolver gave up",
  connect: "the connection attempt gave up",
  tls: "the handshake gave up",
  http: "the exchange gave up",
};

export function failureReason(failure: ProbeFailure, timeoutMs: number): string {
  // The probe knows the phase a deadline cut short; only the diagnostic knows the timeout it set.
  if (!failure.timedOut) return failure.reason;
  // Ended before the time allowed: a limit of its own gave up first (the resolver's, at about 5 s of silence).
  // The reason says the time it had, never the allowance it did not reach ("5031 ms, Timed out after 6 s" was).
  if (failure.elapsedMs < timeoutMs - Math.max(EARLY_MARGIN_MS, timeoutMs / 20)) {
    return `Timed out after ${formatDuration(Math.round(failure.elapsedMs))} ${TIMEOUT_WAITS[failure.stage]} (${GAVE_UP_FIRST[failure.stage]} before the ${formatDuration(timeoutMs)} allowed)`;
  }
  return `Timed out after ${formatDuration(timeoutMs)} ${TIMEOUT_WAITS[failure.stage]}`;
}

export function redirectRefusalReason(rule: RefusalRule): string {
  return rule === "no_address" ? NO_ADDRESS_REASON : REDIRECT_REFUSAL_REASONS[rule];
}

/** "6 s", "1.5 s", "250 ms": the timeout as people write it. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  const seconds = Math.round(ms / 100) / 10;
  return `${seconds} s`;
}
