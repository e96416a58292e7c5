/**
 * The public table of failure and refusal codes: every stable `code`, the
 * stage it belongs to and the sentence people read, for the probe's failures,
 * the diagnostics' own conclusions and refusals of the caller's URL alike.
 * Below every layer: the probe and the diagnostics each read their own rows
 * here, and neither reaches into the other for its words.
 */
import { MAX_URL_LENGTH, VANTAGES } from "./limits.js";

/** The stage of a hop at which something went wrong (spec §2.2 failedStage). */
export type FailureStage = "dns" | "connect" | "tls" | "http";

/**
 * The rules of the target policy. A refusal names the rule that made it, so a
 * 400 (or a refused redirect) can always say why.
 */
export type RefusalRule =
  | "invalid_url" // not parseable as an absolute URL
  | "url_too_long" // over MAX_URL_LENGTH
  | "scheme" // not http: or https:
  | "credentials" // user:pass@ in the URL
  | "port" // outside the diagnostic's allowed ports
  | "bad_port" // a WHATWG Fetch "bad port" (SMTP, SSH, IRC ...)
  | "non_public_address" // an IP literal, or any resolved address, that is not globally reachable
  | "no_address"; // resolution gave no address at all

/** The row of the address table that refused an address (src/probe/policy/address-ranges.ts). */
export interface RefusedRange {
  readonly cidr: string;
  readonly name: string;
  /** The document defining the block: "RFC 1918". */
  readonly rfc: string;
}

export interface PolicyRefusal {
  readonly rule: RefusalRule;
  /**
   * The stable code of the row in this table (`input_scheme`, ...): what a
   * caller switches on, never the sentence. A redirect target refused by the same
   * rule is reported with its own `redirect_refused_*` row instead.
   */
  readonly code: string;
  /** Human sentence naming the rule: "Target 10.0.0.1 is not a public address". */
  readonly reason: string;
  /** Only for non_public_address: the block that refused the address. */
  readonly range?: RefusedRange;
}

export interface CauseInfo {
  /** "input": a refusal of the caller's URL (a 400), decided before any stage ran. */
  readonly stage: FailureStage | "input";
  /**
   * Stable snake_case code callers switch on (`details.code`, a request's
   * `failure.code`); never renamed. README lists every code; a test checks both ways.
   */
  readonly code: string;
  readonly reason: string;
  readonly timedOut?: true;
  /**
   * Set on rows a diagnostic words itself with specifics (the status it got,
   * the redirect limit): `reason` is then the generic form, and the row is
   * here for its code.
   */
  readonly wordedBy?: "is-site-down" | "redirect-check" | "target-policy";
  /** On input rows: the policy rule the refusal belongs to. */
  readonly rule?: RefusalRule;
}

/** A row of a failure some stage had (every row but the input refusals). */
export type FailureCauseInfo = CauseInfo & { readonly stage: FailureStage };

const INTERNAL_REASON = "The check failed on an error of sitediag's own, not of the site; it was logged";

/**
 * Every cause the engine names, with the stage it belongs to and the sentence
 * people read; the only table of failure sentences (is-site-down shows these
 * as they are). Codes are the ones Node, c-ares and OpenSSL already use, so a
 * log line and a failure agree; what the probe's own HTTP code names (a head
 * too large, a connection closed unanswered) has a name of ours. A code that means different things
 * in different phases is keyed by the phase too ("tls:ECONNRESET"); that key
 * wins over the bare code. docs/probe.md lists the same table.
 */
export const CAUSES: Readonly<Record<string, CauseInfo>> = {
  // Resolution (c-ares and getaddrinfo codes, as Node reports them).
  ENOTFOUND: { stage: "dns", code: "dns_no_such_host", reason: "DNS lookup failed: no such host" },
  ENODATA: { stage: "dns", code: "dns_no_address", reason: "DNS lookup failed: the name has no address" },
  ESERVFAIL: { stage: "dns", code: "dns_server_failure", reason: "DNS lookup failed: the name server reported a failure" },
  EAI_FAIL: { stage: "dns", code: "dns_server_failure", reason: "DNS lookup failed: the name server reported a failure" },
  EREFUSED: { stage: "dns", code: "dns_query_refused", reason: "DNS lookup failed: the name server refused the query" },
  "dns:ECONNREFUSED": { stage: "dns", code: "dns_server_unreachable", reason: "DNS lookup failed: the name server could not be reached" },
  EBADNAME: { stage: "dns", code: "dns_invalid_name", reason: "DNS lookup failed: the host name is not valid" },
  EAI_AGAIN: { stage: "dns", code: "dns_temporary_failure", reason: "DNS lookup failed: temporary failure in name resolution" },
  EBADRESP: { stage: "dns", code: "dns_malformed_answer", reason: "DNS lookup failed: the name server sent a malformed answer" },
  ETIMEOUT: { stage: "dns", code: "dns_timeout", reason: "DNS lookup timed out", timedOut: true },
  // A failure the resolver explained with an Extended DNS Error (RFC 8914), read only with details (src/probe/extended-dns-error.ts).
  EDE_DNSSEC_BOGUS: { stage: "dns", code: "dns_dnssec_bogus", reason: "DNS lookup failed: DNSSEC validation failed (the answer is bogus)" },
  EDE_DNSSEC_SIGNATURE_TIME: {
    stage: "dns",
    code: "dns_dnssec_signature_expired",
    reason: "DNS lookup failed: DNSSEC validation failed (a signature has expired or is not yet valid)",
  },
  EDE_BLOCKED: { stage: "dns", code: "dns_blocked", reason: "DNS lookup failed: the resolver blocked the name by its own policy" },
  EDE_NO_REACHABLE_AUTHORITY: {
    stage: "dns",
    code: "dns_authority_unreachable",
    reason: "DNS lookup failed: the resolver could not reach the name's own servers",
  },
  // Connection.
  ECONNREFUSED: { stage: "connect", code: "connect_refused", reason: "Connection refused" },
  "connect:ECONNRESET": { stage: "connect", code: "connect_reset", reason: "Connection reset while connecting" },
  EHOSTUNREACH: { stage: "connect", code: "connect_host_unreachable", reason: "Host unreachable" },
  ENETUNREACH: { stage: "connect", code: "connect_network_unreachable", reason: "Network unreachable" },
  EADDRNOTAVAIL: { stage: "connect", code: "connect_address_unavailable", reason: "Address not available" },
  REMOTE_ADDRESS_MISMATCH: {
    stage: "connect",
    code: "connect_address_mismatch",
    reason: "Connection refused by policy: the peer was not the approved address",
  },
  CONNECT_TIMEOUT: { stage: "connect", code: "connect_timeout", reason: "Connection timed out", timedOut: true },
  // TLS (OpenSSL verify codes and Node's TLS codes).
  CERT_HAS_EXPIRED: { stage: "tls", code: "tls_certificate_expired", reason: "TLS certificate has expired" },
  CERT_NOT_YET_VALID: { stage: "tls", code: "tls_certificate_not_yet_valid", reason: "TLS certificate is not yet valid" },
  ERR_TLS_CERT_ALTNAME_INVALID: { stage: "tls", code: "tls_hostname_mismatch", reason: "TLS certificate does not match the host name" },
  DEPTH_ZERO_SELF_SIGNED_CERT: { stage: "tls", code: "tls_self_signed", reason: "TLS certificate is self-signed" },
  SELF_SIGNED_CERT_IN_CHAIN: {
    stage: "tls",
    code: "tls_untrusted_root",
    reason: "TLS certificate chain ends in an untrusted self-signed certificate",
  },
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: {
    stage: "tls",
    code: "tls_untrusted_issuer",
    reason: "TLS certificate is not issued by a trusted authority",
  },
  UNABLE_TO_GET_ISSUER_CERT: { stage: "tls", code: "tls_untrusted_issuer", reason: "TLS certificate is not issued by a trusted authority" },
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: {
    stage: "tls",
    code: "tls_untrusted_issuer",
    reason: "TLS certificate is not issued by a trusted authority",
  },
  CERT_REVOKED: { stage: "tls", code: "tls_certificate_revoked", reason: "TLS certificate has been revoked" },
  CERT_SIGNATURE_FAILURE: { stage: "tls", code: "tls_bad_signature", reason: "TLS certificate signature is invalid" },
  ERR_SSL_WRONG_VERSION_NUMBER: { stage: "tls", code: "tls_not_tls", reason: "TLS handshake failed: the server did not answer with TLS" },
  "tls:ECONNRESET": { stage: "tls", code: "tls_reset", reason: "TLS handshake failed: the connection was reset" },
  ERR_TLS_HANDSHAKE_TIMEOUT: { stage: "tls", code: "tls_timeout", reason: "TLS handshake timed out", timedOut: true },
  // HTTP (our own exchange's codes, and llhttp's: every HPE_* code reads as HTTP_PARSE_ERROR).
  "http:ECONNRESET": { stage: "http", code: "http_connection_closed", reason: "The server closed the connection without a response" },
  CONNECTION_CLOSED: { stage: "http", code: "http_connection_closed", reason: "The server closed the connection without a response" },
  EPIPE: { stage: "http", code: "http_connection_closed", reason: "The server closed the connection without a response" },
  RESPONSE_HEAD_TOO_LARGE: { stage: "http", code: "http_headers_too_large", reason: "The server sent response headers that are too large" },
  HTTP_PARSE_ERROR: { stage: "http", code: "http_invalid_response", reason: "The server sent an invalid HTTP response" },
  HTTP_09_RESPONSE: {
    stage: "http",
    code: "http_09_response",
    reason: "The server answered without a status line (HTTP/0.9), which browsers refuse",
  },
  RESPONSE_HEAD_TIMEOUT: { stage: "http", code: "http_timeout", reason: "No complete response head within the timeout", timedOut: true },
  // Browser fidelity: what a browser accepts, repairs or warns about, told apart from a plain failure
  CERT_CHAIN_INCOMPLETE: {
    stage: "tls",
    code: "tls_incomplete_chain",
    reason:
      "The server's certificate chain is incomplete (missing intermediate certificate); some browsers repair this, most clients do not",
  },
  ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL: {
    stage: "tls",
    code: "tls_alpn_refused",
    reason: "TLS handshake failed: the server accepts neither h2 nor http/1.1 in ALPN",
  },
  CONFLICTING_LOCATION: {
    stage: "http",
    code: "http_conflicting_location",
    reason: "The server sent an invalid HTTP response: two different Location headers",
  },
  TOO_MANY_INTERIM_RESPONSES: {
    stage: "http",
    code: "http_too_many_interim_responses",
    reason: "The server sent too many interim (1xx) responses",
  },
  HTTP2_STREAM_ERROR: { stage: "http", code: "http_h2_stream_reset", reason: "The server reset the HTTP/2 stream without a response" },
  HTTP2_PROTOCOL_ERROR: { stage: "http", code: "http_h2_protocol_error", reason: "The server broke the HTTP/2 protocol" },
  // A defect of ours inside a hop (src/probe/failure.ts InternalProbeError): never the target's doing, and
  // never past its own check. One row per phase, so the failure's stage is the phase the hop had reached.
  "dns:INTERNAL_PROBE_ERROR": { stage: "dns", code: "internal_probe_error", reason: INTERNAL_REASON },
  "connect:INTERNAL_PROBE_ERROR": { stage: "connect", code: "internal_probe_error", reason: INTERNAL_REASON },
  "tls:INTERNAL_PROBE_ERROR": { stage: "tls", code: "internal_probe_error", reason: INTERNAL_REASON },
  INTERNAL_PROBE_ERROR: { stage: "http", code: "internal_probe_error", reason: INTERNAL_REASON },
  // Redirect targets the target policy refused (no packet was sent to them). Keys are
  // REFUSED_ plus the rule (RefusalRule), in upper case; no error carries them.
  REFUSED_NON_PUBLIC_ADDRESS: {
    stage: "http",
    code: "redirect_refused_non_public",
    reason: "Redirect to a non-public address was refused",
  },
  REFUSED_BAD_PORT: { stage: "http", code: "redirect_refused_bad_port", reason: "Redirect to a blocked port was refused" },
  REFUSED_PORT: { stage: "http", code: "redirect_refused_port", reason: "Redirect to a port that is not allowed was refused" },
  REFUSED_CREDENTIALS: { stage: "http", code: "redirect_refused_credentials", reason: "Redirect to a URL with credentials was refused" },
  REFUSED_URL_TOO_LONG: {
    stage: "http",
    code: "redirect_refused_url_too_long",
    reason: `Redirect to a URL longer than ${MAX_URL_LENGTH} characters was refused`,
  },
  REFUSED_SCHEME: { stage: "http", code: "redirect_refused_scheme", reason: "Redirect to a non-HTTP URL cannot be followed" },
  REFUSED_INVALID_URL: { stage: "http", code: "redirect_refused_invalid_url", reason: "Redirect to an invalid URL was refused" },
  // Refusals of the caller's own URL: a 400, nothing sent. Keys are INPUT_ plus what was
  // wrong; `rule` is the policy rule (RefusalRule). A row without `wordedBy` is the very
  // sentence the caller reads; the others are worded with the specifics (the port, the address).
  INPUT_MISSING_URL: { stage: "input", rule: "invalid_url", code: "input_missing_url", reason: "The url parameter is required" },
  INPUT_NOT_ABSOLUTE: {
    stage: "input",
    rule: "invalid_url",
    code: "input_not_absolute",
    reason: "The URL must be absolute and include the scheme, as in https://example.com/",
  },
  INPUT_INVALID_URL: { stage: "input", rule: "invalid_url", code: "input_invalid_url", reason: "The URL could not be parsed" },
  INPUT_NO_HOST: { stage: "input", rule: "invalid_url", code: "input_no_host", reason: "The URL has no host" },
  INPUT_URL_TOO_LONG: {
    stage: "input",
    rule: "url_too_long",
    code: "input_url_too_long",
    reason: `The URL is longer than ${MAX_URL_LENGTH} characters`,
  },
  INPUT_SCHEME: {
    stage: "input",
    rule: "scheme",
    code: "input_scheme",
    reason: "Only http and https URLs can be checked, not <scheme>",
    wordedBy: "target-policy",
  },
  INPUT_CREDENTIALS: {
    stage: "input",
    rule: "credentials",
    code: "input_credentials",
    reason: "URLs with credentials (user:password@) are not allowed",
  },
  INPUT_PORT: {
    stage: "input",
    rule: "port",
    code: "input_port",
    reason: "Port <port> is not allowed; allowed ports: <ports>",
    wordedBy: "target-policy",
  },
  INPUT_BAD_PORT: {
    stage: "input",
    rule: "bad_port",
    code: "input_bad_port",
    reason: "Port <port> is blocked (a WHATWG Fetch bad port)",
    wordedBy: "target-policy",
  },
  INPUT_NON_PUBLIC_ADDRESS: {
    stage: "input",
    rule: "non_public_address",
    code: "input_non_public_address",
    reason: "Target <address> is not a public address (<range name>, <RFC>)",
    wordedBy: "target-policy",
  },
  INPUT_RESOLVES_NON_PUBLIC: {
    stage: "input",
    rule: "non_public_address",
    code: "input_resolves_non_public",
    reason: "Target <host> resolves to <address>, which is not a public address (<range name>, <RFC>)",
    wordedBy: "target-policy",
  },
  // Refusals of the vantages a caller named (docs/vantages.md): a 400 before any charge, since a
  // list that is not one has no price. No policy rule: they judge the request, not the target.
  VANTAGES_SYNTAX: {
    stage: "input",
    code: "input_vantages_syntax",
    reason: `vantages must be vantage names (lower-case letters, digits and '-', 1 to ${VANTAGES.maxNameLength} characters, no '-' at either end) separated by commas, or all alone`,
  },
  VANTAGES_TOO_MANY: {
    stage: "input",
    code: "input_vantages_too_many",
    reason: `At most ${VANTAGES.maxNamed} vantages can be named at once`,
  },
  // A user_agent the service cannot speak as (docs/api.md): a 400 before any charge, as a vantage list that is not one.
  USER_AGENT: { stage: "input", code: "input_user_agent", reason: "user_agent must be browser, googlebot or bingbot" },
  // What the diagnostics conclude from answers that did arrive; no error carries these keys.
  REDIRECT_MISSING_LOCATION: { stage: "http", code: "redirect_missing_location", reason: "Redirect without a Location header" },
  REDIRECT_INVALID_LOCATION: { stage: "http", code: "redirect_invalid_location", reason: "Redirect to a Location that is not a valid URL" },
  SERVER_ERROR: { stage: "http", code: "http_server_error", reason: "Server returned <status> <reason phrase>", wordedBy: "is-site-down" },
  TOO_MANY_REDIRECTS: { stage: "http", code: "too_many_redirects", reason: "Too many redirects", wordedBy: "is-site-down" },
  REDIRECT_LOOP: {
    stage: "http",
    code: "redirect_loop",
    reason: "A redirect led back to a URL already in the chain",
    wordedBy: "redirect-check",
  },
  TRACE_TIMEOUT: {
    stage: "http",
    code: "trace_timeout",
    reason: "The whole trace ran out of its time budget",
    timedOut: true,
    wordedBy: "redirect-check",
  },
};

/** The row of a refusal of the caller's URL (INPUT_SCHEME, ...). */
export function inputRefusalCause(key: `INPUT_${string}`): CauseInfo & { readonly rule: RefusalRule } {
  const info = row(key);
  if (info?.rule === undefined) throw new Error(`no input row ${key}`);
  return Object.assign({}, info, { rule: info.rule });
}

/** The row of a vantage list that is not one (the caller's `vantages`). */
export function vantageListCause(key: "VANTAGES_SYNTAX" | "VANTAGES_TOO_MANY"): CauseInfo {
  const info = row(key);
  if (info === undefined) throw new Error(`no row for ${key}`);
  return info;
}

/** The row of a user_agent the service cannot speak as. */
export function userAgentCause(): CauseInfo {
  const info = row("USER_AGENT");
  if (info === undefined) throw new Error("no row for USER_AGENT");
  return info;
}

/** The row of a redirect target the policy refused (a name without address is a DNS failure instead). */
export function refusalCause(rule: Exclude<RefusalRule, "no_address">): CauseInfo {
  const info = row(`REFUSED_${rule.toUpperCase()}`);
  if (info === undefined) throw new Error(`no row for refusal rule ${rule}`);
  return info;
}

/** The row of an outcome a diagnostic names (SERVER_ERROR, REDIRECT_LOOP, ...). */
export function outcomeCause(
  key:
    | "REDIRECT_MISSING_LOCATION"
    | "REDIRECT_INVALID_LOCATION"
    | "SERVER_ERROR"
    | "TOO_MANY_REDIRECTS"
    | "REDIRECT_LOOP"
    | "TRACE_TIMEOUT",
): CauseInfo {
  const info = row(key);
  if (info === undefined) throw new Error(`no row for ${key}`);
  return info;
}

/** The sentence for a code no row names: the phase's own, generic one. */
export const STAGE_FALLBACKS: Readonly<Record<FailureStage, string>> = {
  dns: "DNS lookup failed",
  connect: "Connection failed",
  tls: "TLS handshake failed",
  http: "The HTTP request failed",
};

/** The code of a failure no row names: the phase's own. */
export const STAGE_FALLBACK_CODES: Readonly<Record<FailureStage, string>> = {
  dns: "dns_failed",
  connect: "connect_failed",
  tls: "tls_failed",
  http: "http_failed",
};

/** Every stable code there is: the table's, then the fallbacks'. */
export function allFailureCodes(): ReadonlySet<string> {
  return new Set([...Object.values(CAUSES).map((info) => info.code), ...Object.values(STAGE_FALLBACK_CODES)]);
}

/**
 * The row for a code met in a phase: the phase-qualified row, else the code's
 * own, else the phase's generic sentence. llhttp names each way a response
 * can be malformed (HPE_INVALID_CONSTANT, ...); one row covers them all.
 */
export function causeInfo(code: string, phase: FailureStage): FailureCauseInfo {
  const key = code.startsWith("HPE_") ? "HTTP_PARSE_ERROR" : code;
  return (
    failureRow(`${phase}:${key}`) ?? failureRow(key) ?? { stage: phase, code: STAGE_FALLBACK_CODES[phase], reason: STAGE_FALLBACKS[phase] }
  );
}

/** A row an error code may name: input refusals are never an error's code. */
function failureRow(key: string): FailureCauseInfo | undefined {
  const info = row(key);
  return info === undefined || info.stage === "input" ? undefined : Object.assign({}, info, { stage: info.stage });
}

/** Own rows only: a code is outside data ("constructor" must not find Object's). */
function row(key: string): CauseInfo | undefined {
  return Object.hasOwn(CAUSES, key) ? CAUSES[key] : undefined;
}

/** The stable code of a hop's failure, from the cause and stage it already carries. */
export function failureCode(failure: { readonly cause: string; readonly stage: FailureStage }): string {
  return causeInfo(failure.cause, failure.stage).code;
}

/**
 * A refusal of the caller's URL from its row. `reason` is given only where the
 * row is worded with specifics (a port, an address); otherwise it is the row's
 * own. `range`: the address table's row that refused the address.
 */
export function refusal(
  key: `INPUT_${string}`,
  reason?: string,
  range?: { readonly cidr: string; readonly name: string; readonly source: string } | null,
): PolicyRefusal {
  const info = inputRefusalCause(key);
  const base = { rule: info.rule, code: info.code, reason: reason ?? info.reason };
  return range === undefined || range === null
    ? base
    : Object.assign({}, base, { range: { cidr: range.cidr, name: range.name, rfc: range.source } });
}
