import type { DiagnosticOutcome } from "./diagnostic-call.js";
import type { DiagnosticDetails } from "./details-types.js";
import type { TraceWarning } from "./warnings.js";

/**
 * Overall outcomes of a trace, as neutral ids: the contract's wording
 * ("Redirects detected", spec §2.3) is applied once, where the result is
 * rendered (the proto enum's rest_value), never inside the diagnostic. Each id
 * is the contract's name in snake_case.
 */
export const CHAIN_STATUS_IDS = ["healthy", "redirects_detected", "redirect_loop", "too_many_redirects", "request_failed", "timeout"] as const;

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
