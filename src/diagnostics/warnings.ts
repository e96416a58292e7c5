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
  client_side_redirect_not_followed: "The final page redirects by itself (Refresh header or meta refresh), which is reported, not followed (only with details)",
} as const;

export type TraceWarningCode = keyof typeof TRACE_WARNINGS;

/** One observation along a trace. `hop` names an entry of `chain`, or is null for the chain as a whole. */
export interface TraceWarning {
  readonly code: TraceWarningCode;
  readonly message: string;
  readonly hop: number | null;
}

export function traceWarning(code: TraceWarningCode, message: string, hop: number | null = null): TraceWarning {
  return { code, message, hop };
}
