import { errors } from "undici";
import type { FailureStage, ProbeFailure } from "./failure.js";

export interface CauseInfo {
  readonly stage: FailureStage;
  readonly reason: string;
  readonly timedOut?: true;
}

/**
 * Every cause the engine names, with the stage it belongs to and the sentence
 * people read; the only table of failure sentences (is-site-down shows these
 * as they are). Codes are the ones Node, c-ares, OpenSSL and undici already
 * use, so a log line and a failure agree. A code that means different things
 * in different phases is keyed by the phase too ("tls:ECONNRESET"); that key
 * wins over the bare code. docs/probe.md lists the same table.
 */
export const CAUSES: Readonly<Record<string, CauseInfo>> = {
  // Resolution (c-ares and getaddrinfo codes, as Node reports them).
  ENOTFOUND: { stage: "dns", reason: "DNS lookup failed: no such host" },
  ENODATA: { stage: "dns", reason: "DNS lookup failed: the name has no address" },
  ESERVFAIL: { stage: "dns", reason: "DNS lookup failed: the name server reported a failure" },
  EAI_FAIL: { stage: "dns", reason: "DNS lookup failed: the name server reported a failure" },
  EREFUSED: { stage: "dns", reason: "DNS lookup failed: the name server refused the query" },
  "dns:ECONNREFUSED": { stage: "dns", reason: "DNS lookup failed: the name server could not be reached" },
  EBADNAME: { stage: "dns", reason: "DNS lookup failed: the host name is not valid" },
  EAI_AGAIN: { stage: "dns", reason: "DNS lookup failed: temporary failure in name resolution" },
  EBADRESP: { stage: "dns", reason: "DNS lookup failed: the name server sent a malformed answer" },
  ETIMEOUT: { stage: "dns", reason: "DNS lookup timed out", timedOut: true },
  // Connection.
  ECONNREFUSED: { stage: "connect", reason: "Connection refused" },
  "connect:ECONNRESET": { stage: "connect", reason: "Connection reset while connecting" },
  EHOSTUNREACH: { stage: "connect", reason: "Host unreachable" },
  ENETUNREACH: { stage: "connect", reason: "Network unreachable" },
  EADDRNOTAVAIL: { stage: "connect", reason: "Address not available" },
  REMOTE_ADDRESS_MISMATCH: { stage: "connect", reason: "Connection refused by policy: the peer was not the approved address" },
  UND_ERR_CONNECT_TIMEOUT: { stage: "connect", reason: "Connection timed out", timedOut: true },
  // TLS (OpenSSL verify codes and Node's TLS codes).
  CERT_HAS_EXPIRED: { stage: "tls", reason: "TLS certificate has expired" },
  CERT_NOT_YET_VALID: { stage: "tls", reason: "TLS certificate is not yet valid" },
  ERR_TLS_CERT_ALTNAME_INVALID: { stage: "tls", reason: "TLS certificate does not match the host name" },
  DEPTH_ZERO_SELF_SIGNED_CERT: { stage: "tls", reason: "TLS certificate is self-signed" },
  SELF_SIGNED_CERT_IN_CHAIN: { stage: "tls", reason: "TLS certificate chain ends in an untrusted self-signed certificate" },
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: { stage: "tls", reason: "TLS certificate is not issued by a trusted authority" },
  UNABLE_TO_GET_ISSUER_CERT: { stage: "tls", reason: "TLS certificate is not issued by a trusted authority" },
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: { stage: "tls", reason: "TLS certificate is not issued by a trusted authority" },
  CERT_REVOKED: { stage: "tls", reason: "TLS certificate has been revoked" },
  CERT_SIGNATURE_FAILURE: { stage: "tls", reason: "TLS certificate signature is invalid" },
  ERR_SSL_WRONG_VERSION_NUMBER: { stage: "tls", reason: "TLS handshake failed: the server did not answer with TLS" },
  "tls:ECONNRESET": { stage: "tls", reason: "TLS handshake failed: the connection was reset" },
  ERR_TLS_HANDSHAKE_TIMEOUT: { stage: "tls", reason: "TLS handshake timed out", timedOut: true },
  // HTTP (undici and llhttp codes; every HPE_* code reads as HTTP_PARSE_ERROR).
  "http:ECONNRESET": { stage: "http", reason: "The server closed the connection without a response" },
  UND_ERR_SOCKET: { stage: "http", reason: "The server closed the connection without a response" },
  UND_ERR_CLOSED: { stage: "http", reason: "The server closed the connection without a response" },
  EPIPE: { stage: "http", reason: "The server closed the connection without a response" },
  UND_ERR_HEADERS_OVERFLOW: { stage: "http", reason: "The server sent response headers that are too large" },
  HTTP_PARSE_ERROR: { stage: "http", reason: "The server sent an invalid HTTP response" },
  UND_ERR_HEADERS_TIMEOUT: { stage: "http", reason: "No complete response head within the timeout", timedOut: true },
  // Browser fidelity (issue 18)
  CERT_CHAIN_INCOMPLETE: {
    stage: "tls",
    reason: "The server's certificate chain is incomplete (missing intermediate certificate); some browsers repair this, most clients do not",
  },
  ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL: { stage: "tls", reason: "TLS handshake failed: the server accepts neither h2 nor http/1.1 in ALPN" },
  CONFLICTING_LOCATION: { stage: "http", reason: "The server sent an invalid HTTP response: two different Location headers" },
  TOO_MANY_INTERIM_RESPONSES: { stage: "http", reason: "The server sent too many interim (1xx) responses" },
  HTTP2_STREAM_ERROR: { stage: "http", reason: "The server reset the HTTP/2 stream without a response" },
  HTTP2_PROTOCOL_ERROR: { stage: "http", reason: "The server broke the HTTP/2 protocol" },
};

/** The sentence for a code no row names: the phase's own, generic one. */
export const STAGE_FALLBACKS: Readonly<Record<FailureStage, string>> = {
  dns: "DNS lookup failed",
  connect: "Connection failed",
  tls: "TLS handshake failed",
  http: "The HTTP request failed",
};

/** Every code CAUSES names, with or without a phase: what errorCodeOf looks for in a cause chain. */
const KNOWN_CODES: ReadonlySet<string> = new Set(Object.keys(CAUSES).map((key) => key.slice(key.indexOf(":") + 1)));

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
  const cause = facts.aborted ? TIMEOUT_CAUSE[facts.phase] : facts.code;
  const info = causeInfo(cause, facts.phase);
  return { ...base, stage: info.stage, timedOut: facts.aborted || info.timedOut === true, cause, reason: info.reason };
}

/**
 * The row for a code met in a phase: the phase-qualified row, else the code's
 * own, else the phase's generic sentence. llhttp names each way a response
 * can be malformed (HPE_INVALID_CONSTANT, ...); one row covers them all.
 */
export function causeInfo(code: string, phase: FailureStage): CauseInfo {
  const key = code.startsWith("HPE_") ? "HTTP_PARSE_ERROR" : code;
  return row(`${phase}:${key}`) ?? row(key) ?? { stage: phase, reason: STAGE_FALLBACKS[phase] };
}

/** Own rows only: a code is outside data ("constructor" must not find Object's). */
function row(key: string): CauseInfo | undefined {
  return Object.hasOwn(CAUSES, key) ? CAUSES[key] : undefined;
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
  const known = [...codes].reverse().find((code) => KNOWN_CODES.has(code) || code.startsWith("HPE_"));
  return known ?? codes[0] ?? "UNKNOWN";
}
