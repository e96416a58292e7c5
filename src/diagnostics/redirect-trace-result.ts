import type { DiagnosticDetails } from "./diagnostic-details.js";
import type { DiagnosticOutcome } from "./diagnostic-call.js";

/**
 * Overall outcomes of a trace, as neutral ids: the contract's wording
 * ("Redirects detected", spec §2.3) is applied once, where the result is
 * rendered (the proto enum's rest_value), never inside the diagnostic. Each id
 * is the contract's name in snake_case.
 */
export const CHAIN_STATUS_IDS = [
  "healthy",
  "redirects_detected",
  "redirect_loop",
  "too_many_redirects",
  "request_failed",
  "timeout",
] as const;

export type ChainStatusId = (typeof CHAIN_STATUS_IDS)[number];

/** One request of the trace that got an HTTP response (spec §2.3, hop object). */
export interface TraceHop {
  /** Position in the chain, from 1. */
  readonly hop: number;
  /** The URL requested, WHATWG-serialised. */
  readonly url: string;
  readonly hostname: string;
  readonly status: number;
  readonly statusText: string;
  /** The redirect target resolved to an absolute URL; null when the hop is not a redirect or has no usable Location. */
  readonly location: string | null;
  /** "301 Moved Permanently" for a redirect status; null otherwise. */
  readonly redirectType: string | null;
  readonly responseTimeMs: number;
  /** True when an http: hop redirects to an https: URL. */
  readonly upgradedToHttps: boolean;
}

/** How a walk along the chain stopped. Only a chain that reached a final response has a finalStatus. */
export interface ChainEnding {
  readonly status: ChainStatusId;
  readonly finalUrl: string;
  readonly finalStatus: number | null;
}

/** Every field of spec §2.3. */
export interface RedirectTraceResult {
  /** The input exactly as supplied. */
  readonly input: string;
  /** Redirect responses in `chain`. */
  readonly redirects: number;
  readonly finalUrl: string;
  /** Null when the final destination was never visited. */
  readonly finalStatus: number | null;
  readonly totalTimeMs: number;
  readonly chainStatus: ChainStatusId;
  readonly chain: readonly TraceHop[];
  readonly warnings: readonly TraceWarning[];
  /** Only when the trace was asked for details: absent otherwise, so the plain result keeps its shape. */
  readonly details?: DiagnosticDetails;
}

/**
 * How a trace ends (diagnostic-call.ts). Only an unusable *starting* input is
 * refused; anything that goes wrong later is a result with a partial chain.
 */
export type RedirectTraceOutcome = DiagnosticOutcome<RedirectTraceResult>;

/**
 * Every warning code redirect-check can emit, in one table. Codes are part of
 * the public contract (clients switch on them), so they are never renamed;
 * docs/redirect-check.md lists the same table for callers.
 */
export const TRACE_WARNINGS = {
  dns_failed: "A host name in the chain did not resolve",
  connect_failed: "No TCP connection could be made to a target",
  tls_failed: "The TLS handshake or certificate check failed",
  http_failed: "The HTTP exchange failed (reset, empty or malformed reply)",
  hop_timeout: "A request ran out of its per-request time",
  trace_timeout: "The whole trace ran out of its time budget",
  redirect_target_refused: "A redirect pointed to a target the service may not visit",
  missing_location: "A redirect response carried no Location header",
  invalid_location: "A redirect response carried a Location that is not a usable URL",
  redirect_loop: "A redirect led back to a URL already in the chain",
  too_many_redirects: "The chain has more redirects than are followed",
  https_downgrade: "A redirect goes from HTTPS to plain HTTP",
  temporary_redirect: "A temporary redirect (302, 303 or 307) is part of the chain",
  long_chain: "The chain has more than 3 redirects",
  final_status_error: "The final response is a client or server error (4xx/5xx)",
  head_refused_get_used: "HEAD was refused or failed, so the hop was retried with GET",
  host_changed: "A redirect moves to a different host",
  client_side_redirect_not_followed:
    "The final page redirects by itself (Refresh header or meta refresh), which is reported, not followed (only with details)",
  hsts_missing: "The chain started on http:// and its final HTTPS page sets no valid Strict-Transport-Security policy",
  hsts_short: "The final HTTPS page's Strict-Transport-Security max-age is under 180 days",
  ipv6_unreachable: "The first request failed over IPv6 while IPv4 answered (only with details)",
  ipv4_unreachable: "The first request failed over IPv4 while IPv6 answered (only with details)",
  families_disagree: "The first request got a different status or certificate over IPv4 than over IPv6 (only with details)",
  address_unreachable: "The first request failed at one or more of its host's addresses while another answered (only with details)",
  addresses_disagree:
    "The first request got a different status or certificate at one of its host's addresses than at another (only with details)",
  tls13_not_supported: "The first host refused a TLS 1.3 handshake (only with details)",
  legacy_tls_accepted: "The first host still completes a TLS 1.0 or 1.1 handshake (only with details)",
  certificate_revoked: "A server stapled an OCSP answer saying its own certificate is revoked",
  certificate_expires_soon:
    "A certificate of the chain expires in fewer days than the configured threshold (14 by default); with details, any certificate of its chain, named",
  noindex: "The final page asks search engines not to index it (robots meta or X-Robots-Tag: noindex or none) (only with details)",
  canonical_elsewhere: "The final page names another URL as its canonical (link element or Link header) (only with details)",
  redirect_to_home: "A URL with a path was redirected to a site's root, which search engines treat as a soft 404 (only with details)",
  soft_404_suspected: "The final page answers 200 but its title or first heading says not found (only with details)",
  domain_expires_soon:
    "The first host's domain registration (RDAP) expires in fewer days than the configured threshold (30 by default) (only with details)",
  domain_expired: "The first host's domain registration (RDAP) has expired (only with details)",
  domain_on_hold: "The first host's domain is on clientHold or serverHold: its registry keeps it out of DNS (only with details)",
} as const;

export type TraceWarningCode = keyof typeof TRACE_WARNINGS;

/**
 * How much a warning matters, as the page and the CLI show it: `info` is
 * worth knowing and needs nothing done; `warning` works but costs visitors or
 * search engines something; `problem` is broken or unsafe, and makes the
 * trace one to look at (the CLI's exit status) whatever its chain status.
 */
export type TraceWarningSeverity = "info" | "warning" | "problem";

/** The one severity of each code: a code never changes severity from one trace to the next. */
export const TRACE_WARNING_SEVERITY: Readonly<Record<TraceWarningCode, TraceWarningSeverity>> = {
  dns_failed: "problem",
  connect_failed: "problem",
  tls_failed: "problem",
  http_failed: "problem",
  hop_timeout: "problem",
  trace_timeout: "problem",
  redirect_target_refused: "problem",
  missing_location: "problem",
  invalid_location: "problem",
  redirect_loop: "problem",
  too_many_redirects: "problem",
  // Leaving HTTPS exposes the visit (and any cookie without Secure) on the wire, whatever the chain's status.
  https_downgrade: "problem",
  final_status_error: "problem",
  temporary_redirect: "warning",
  long_chain: "warning",
  client_side_redirect_not_followed: "warning",
  // Without HSTS the first http:// request of every visit can be intercepted; the site still works.
  hsts_missing: "warning",
  hsts_short: "info",
  // What a browser saw works; visitors whose network has only the other family (or whose fallback is slow) do not get it.
  ipv6_unreachable: "warning",
  ipv4_unreachable: "warning",
  families_disagree: "warning",
  // Visitors sent to that address (DNS round robin) get a broken site; the others do not.
  address_unreachable: "warning",
  addresses_disagree: "warning",
  // Works everywhere; a slower handshake than it could be.
  tls13_not_supported: "info",
  // Works; an old protocol browsers dropped in 2020, which compliance scans (PCI DSS) flag.
  legacy_tls_accepted: "warning",
  // Browsers that read the staple refuse the site.
  certificate_revoked: "problem",
  // Still valid, so visitors see nothing yet; renewal has failed or is late.
  certificate_expires_soon: "warning",
  domain_expires_soon: "warning",
  domain_expired: "problem",
  domain_on_hold: "problem",
  head_refused_get_used: "info",
  host_changed: "info",
  // What the final page tells search engines (issue 39): it works for visitors and costs the page its place in search.
  noindex: "warning",
  canonical_elsewhere: "warning",
  redirect_to_home: "warning",
  soft_404_suspected: "warning",
};

/** One observation along a trace. `hop` names an entry of `chain`, or is null for the chain as a whole. */
export interface TraceWarning {
  readonly code: TraceWarningCode;
  readonly message: string;
  readonly hop: number | null;
  readonly severity: TraceWarningSeverity;
}

export function traceWarning(code: TraceWarningCode, message: string, hop: number | null = null): TraceWarning {
  return { code, message, hop, severity: TRACE_WARNING_SEVERITY[code] };
}

/** True when a warning of the trace is a problem: the trace is one to look at even when its chain status is normal. */
export function hasProblem(warnings: readonly TraceWarning[]): boolean {
  return warnings.some((warning) => warning.severity === "problem");
}
