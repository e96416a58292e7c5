/**
 * Every `reason` text of is-site-down (spec §2.2: "complete list: not shown"),
 * in one table so the documentation can list them all. A reason is chosen from
 * the structured outcome (stage, cause, rule); nothing matches these strings later.
 */
import { MAX_URL_LENGTH } from "../limits.js";
import type { FailureStage, ProbeFailure } from "../probe/failure.js";
import type { RefusalRule } from "../probe/refusal.js";

const INVALID_HTTP = "The server sent an invalid HTTP response";

/** Known failure causes (Node and undici error codes) with their sentence, per stage. */
export const FAILURE_REASONS: Readonly<Record<FailureStage, Readonly<Record<string, string>>>> = {
  dns: {
    ENOTFOUND: "DNS lookup failed: no such host",
    ENODATA: "DNS lookup failed: the name has no address",
    ESERVFAIL: "DNS lookup failed: the name server reported a failure",
    EREFUSED: "DNS lookup failed: the name server refused the query",
    ECONNREFUSED: "DNS lookup failed: the name server could not be reached",
    EBADNAME: "DNS lookup failed: the host name is not valid",
    ETIMEOUT: "DNS lookup failed: the name server did not answer",
    EAI_AGAIN: "DNS lookup failed: temporary failure in name resolution",
    EAI_FAIL: "DNS lookup failed: the name server reported a failure",
    EBADRESP: "DNS lookup failed: the name server sent a malformed answer",
  },
  connect: {
    ECONNREFUSED: "Connection refused",
    ECONNRESET: "Connection reset while connecting",
    EHOSTUNREACH: "Host unreachable",
    ENETUNREACH: "Network unreachable",
    EADDRNOTAVAIL: "Address not available",
    REMOTE_ADDRESS_MISMATCH: "Connection refused by policy: the peer was not the approved address",
  },
  tls: {
    CERT_HAS_EXPIRED: "TLS certificate has expired",
    CERT_NOT_YET_VALID: "TLS certificate is not yet valid",
    ERR_TLS_CERT_ALTNAME_INVALID: "TLS certificate does not match the host name",
    DEPTH_ZERO_SELF_SIGNED_CERT: "TLS certificate is self-signed",
    SELF_SIGNED_CERT_IN_CHAIN: "TLS certificate chain ends in an untrusted self-signed certificate",
    UNABLE_TO_VERIFY_LEAF_SIGNATURE: "TLS certificate is not issued by a trusted authority",
    UNABLE_TO_GET_ISSUER_CERT: "TLS certificate is not issued by a trusted authority",
    UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "TLS certificate is not issued by a trusted authority",
    CERT_REVOKED: "TLS certificate has been revoked",
    CERT_SIGNATURE_FAILURE: "TLS certificate signature is invalid",
    ERR_SSL_WRONG_VERSION_NUMBER: "TLS handshake failed: the server did not answer with TLS",
    ECONNRESET: "TLS handshake failed: the connection was reset",
  },
  http: {
    ECONNRESET: "The server closed the connection without a response",
    UND_ERR_SOCKET: "The server closed the connection without a response",
    UND_ERR_CLOSED: "The server closed the connection without a response",
    EPIPE: "The server closed the connection without a response",
    UND_ERR_HEADERS_OVERFLOW: "The server sent response headers that are too large",
    HTTP_PARSE_ERROR: INVALID_HTTP,
  },
};

/** When the cause is not in FAILURE_REASONS. */
export const STAGE_REASONS: Readonly<Record<FailureStage, string>> = {
  dns: "DNS lookup failed",
  connect: "Connection failed",
  tls: "TLS handshake failed",
  http: "The HTTP request failed",
};

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
export const NO_ADDRESS_REASON = FAILURE_REASONS.dns.ENODATA ?? STAGE_REASONS.dns;

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
  if (failure.timedOut) return `Timed out after ${formatDuration(timeoutMs)} ${TIMEOUT_WAITS[failure.stage]}`;
  // llhttp names each way a response can be malformed (HPE_INVALID_CONSTANT, ...); one sentence covers them.
  const cause = failure.cause.startsWith("HPE_") ? "HTTP_PARSE_ERROR" : failure.cause;
  return FAILURE_REASONS[failure.stage][cause] ?? STAGE_REASONS[failure.stage];
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
