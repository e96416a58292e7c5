/**
 * The `reason` texts that are is-site-down's own (spec §2.2: "complete list:
 * not shown"): server answers, redirect defects and refusals, and timeouts,
 * which name the configured timeout. Every other failure reads the probe's
 * sentence (`ProbeFailure.reason`, from src/probe/failure-causes.ts). A reason
 * is chosen from the structured outcome; nothing matches these strings later.
 */
import { MAX_URL_LENGTH } from "../limits.js";
import { causeInfo } from "../probe/failure-causes.js";
import type { FailureStage, ProbeFailure } from "../probe/failure.js";
import type { RefusalRule } from "../probe/refusal.js";

/** A timeout: what we were waiting for at each stage. */
const TIMEOUT_WAITS: Readonly<Record<FailureStage, string>> = {
  dns: "resolving the host name",
  connect: "connecting to the server",
  tls: "during the TLS handshake",
  http: "waiting for a response",
};

/** A redirect whose target the target policy refused, per rule. */
export const REDIRECT_REFUSAL_REASONS: Readonly<Record<Exclude<RefusalRule, "no_address">, string>> = {
  non_public_address: "Redirect to a non-public address was refused",
  bad_port: "Redirect to a blocked port was refused",
  port: "Redirect to a port that is not allowed was refused",
  credentials: "Redirect to a URL with credentials was refused",
  url_too_long: `Redirect to a URL longer than ${MAX_URL_LENGTH} characters was refused`,
  scheme: "Redirect to a non-HTTP URL cannot be followed",
  invalid_url: "Redirect to an invalid URL was refused",
};

/** A name that resolved to no address at all is a DNS failure, not a policy matter. */
export const NO_ADDRESS_REASON = causeInfo("ENODATA", "dns").reason;

export const REDIRECT_DEFECT_REASONS = {
  missingLocation: "Redirect without a Location header",
  unparsableLocation: "Redirect to a Location that is not a valid URL",
  nonHttpLocation: REDIRECT_REFUSAL_REASONS.scheme,
} as const;

export type RedirectDefect = keyof typeof REDIRECT_DEFECT_REASONS;

export function serverErrorReason(status: number, statusText: string): string {
  return `Server returned ${status} ${statusText}`.trimEnd();
}

export function tooManyRedirectsReason(maxRequests: number): string {
  return `Too many redirects: still redirecting after ${maxRequests} requests`;
}

export function failureReason(failure: ProbeFailure, timeoutMs: number): string {
  // The probe knows the phase a deadline cut short; only the diagnostic knows the timeout it set.
  if (failure.timedOut) return `Timed out after ${formatDuration(timeoutMs)} ${TIMEOUT_WAITS[failure.stage]}`;
  return failure.reason;
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
