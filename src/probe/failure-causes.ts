import { errors } from "undici";
import type { FailureStage, ProbeFailure } from "./failure.js";

interface CauseInfo {
  readonly stage: FailureStage;
  readonly reason: string;
  readonly timedOut?: true;
}

/**
 * Every cause the engine names, with the stage it belongs to and the sentence
 * people read. Codes are the ones Node, c-ares, OpenSSL and undici already
 * use, so a log line and a failure agree. docs/probe.md lists the same table.
 */
export const CAUSES: Readonly<Record<string, CauseInfo>> = {
  // Resolution (c-ares and getaddrinfo codes, as Node reports them).
  ENOTFOUND: { stage: "dns", reason: "DNS lookup failed: no such host" },
  ENODATA: { stage: "dns", reason: "DNS lookup failed: the name has no IPv4 or IPv6 address" },
  ESERVFAIL: { stage: "dns", reason: "DNS lookup failed: the name server could not answer" },
  EREFUSED: { stage: "dns", reason: "DNS lookup failed: the name server refused the query" },
  EAI_AGAIN: { stage: "dns", reason: "DNS lookup failed: temporary resolver failure" },
  ECONNREFUSED_DNS: { stage: "dns", reason: "DNS lookup failed: the name server could not be reached" },
  EBADRESP: { stage: "dns", reason: "DNS lookup failed: malformed answer" },
  ETIMEOUT: { stage: "dns", reason: "DNS lookup timed out", timedOut: true },
  // Connection.
  ECONNREFUSED: { stage: "connect", reason: "Connection refused" },
  EHOSTUNREACH: { stage: "connect", reason: "Host unreachable" },
  ENETUNREACH: { stage: "connect", reason: "Network unreachable" },
  EADDRNOTAVAIL: { stage: "connect", reason: "Address not available" },
  UND_ERR_CONNECT_TIMEOUT: { stage: "connect", reason: "Connection timed out", timedOut: true },
  REMOTE_ADDRESS_MISMATCH: { stage: "connect", reason: "Connected to an address other than the approved one" },
  // TLS (OpenSSL verify codes and Node's TLS codes).
  ERR_TLS_HANDSHAKE_TIMEOUT: { stage: "tls", reason: "TLS handshake timed out", timedOut: true },
  CERT_HAS_EXPIRED: { stage: "tls", reason: "TLS certificate has expired" },
  CERT_NOT_YET_VALID: { stage: "tls", reason: "TLS certificate is not yet valid" },
  DEPTH_ZERO_SELF_SIGNED_CERT: { stage: "tls", reason: "TLS certificate is self-signed" },
  SELF_SIGNED_CERT_IN_CHAIN: { stage: "tls", reason: "TLS certificate chain ends in an untrusted root" },
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: { stage: "tls", reason: "TLS certificate issuer is not trusted" },
  UNABLE_TO_GET_ISSUER_CERT: { stage: "tls", reason: "TLS certificate issuer is not trusted" },
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: { stage: "tls", reason: "TLS certificate issuer is not trusted" },
  CERT_REVOKED: { stage: "tls", reason: "TLS certificate has been revoked" },
  CERT_SIGNATURE_FAILURE: { stage: "tls", reason: "TLS certificate signature is invalid" },
  ERR_TLS_CERT_ALTNAME_INVALID: { stage: "tls", reason: "TLS certificate does not match the host name" },
  ECONNRESET_TLS: { stage: "tls", reason: "Connection reset during the TLS handshake" },
  TLS_HANDSHAKE_FAILED: { stage: "tls", reason: "TLS handshake failed" },
  // HTTP (undici and llhttp codes).
  UND_ERR_HEADERS_TIMEOUT: { stage: "http", reason: "No complete response head within the timeout", timedOut: true },
  UND_ERR_HEADERS_OVERFLOW: { stage: "http", reason: "Response headers are too large" },
  UND_ERR_SOCKET: { stage: "http", reason: "Connection closed before a complete response head" },
  ECONNRESET: { stage: "http", reason: "Connection reset before a complete response head" },
  EPIPE: { stage: "http", reason: "Connection closed while sending the request" },
  HTTP_PARSE_ERROR: { stage: "http", reason: "Invalid HTTP response" },
  UNKNOWN: { stage: "http", reason: "The request failed" },
};

/** What the hop's own deadline (or the caller's) reports, by the phase it cut short. */
export const TIMEOUT_CAUSE: Readonly<Record<FailureStage, string>> = {
  dns: "ETIMEOUT",
  connect: "UND_ERR_CONNECT_TIMEOUT",
  tls: "ERR_TLS_HANDSHAKE_TIMEOUT",
  http: "UND_ERR_HEADERS_TIMEOUT",
};

export interface FailureFacts {
  /** The phase the hop had reached when it failed. */
  readonly phase: FailureStage;
  /** The error code, read from the error and its `cause` chain. */
  readonly code: string;
  /** True when the hop's timer or the caller's signal ended it. */
  readonly aborted: boolean;
  readonly elapsedMs: number;
  readonly remoteAddress: string | null;
}

/**
 * Names a failure from its code and the phase reached. A code owned by a
 * stage (a certificate error, a DNS rcode) names that stage; a code that can
 * happen anywhere (a reset, an unknown code) takes the phase's.
 */
export function describeFailure(facts: FailureFacts): ProbeFailure {
  const base = { elapsedMs: facts.elapsedMs, remoteAddress: facts.remoteAddress };
  if (facts.aborted) {
    const cause = TIMEOUT_CAUSE[facts.phase];
    return { ...base, stage: facts.phase, timedOut: true, cause, reason: CAUSES[cause]?.reason ?? "Timed out" };
  }
  const info = lookupCause(facts.code, facts.phase);
  return { ...base, stage: info.stage, timedOut: info.timedOut === true, cause: facts.code, reason: info.reason };
}

function lookupCause(code: string, phase: FailureStage): CauseInfo {
  // The same OS code means different things in different phases.
  if (code === "ECONNREFUSED" && phase === "dns") return CAUSES.ECONNREFUSED_DNS ?? fallback(phase);
  if (code === "ECONNRESET" && phase === "tls") return CAUSES.ECONNRESET_TLS ?? fallback(phase);
  if (code === "ECONNRESET" && phase === "connect") return { stage: "connect", reason: "Connection reset while connecting" };
  if (code.startsWith("HPE_")) return CAUSES.HTTP_PARSE_ERROR ?? fallback(phase);
  if (phase === "tls" && (code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_"))) return CAUSES[code] ?? CAUSES.TLS_HANDSHAKE_FAILED ?? fallback(phase);
  return CAUSES[code] ?? fallback(phase);
}

function fallback(phase: FailureStage): CauseInfo {
  const reasons: Record<FailureStage, string> = {
    dns: "DNS lookup failed",
    connect: "Connection failed",
    tls: "TLS handshake failed",
    http: "The request failed",
  };
  return { stage: phase, reason: reasons[phase] };
}

/**
 * The most telling code in an error's `cause` chain: undici wraps socket and
 * parser errors, so the deepest code that names something we know wins.
 */
export function errorCodeOf(error: unknown): string {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if ("code" in current && typeof current.code === "string") codes.push(current.code);
    // undici's parser errors often carry no code (llhttp's number is not mapped back to a name).
    else if (current instanceof errors.HTTPParserError) codes.push("HTTP_PARSE_ERROR");
    current = "cause" in current ? current.cause : undefined;
  }
  const known = [...codes].reverse().find((code) => code in CAUSES || code.startsWith("HPE_"));
  return known ?? codes[0] ?? "UNKNOWN";
}
