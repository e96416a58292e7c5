import type { FailureStage } from "../probe/failure.js";
import type { HopTimings, PeerCertificate, TlsDetail } from "../probe/hop-types.js";
import type { PolicyRefusal } from "../probe/refusal.js";

/**
 * What a person debugging a site wants beyond the contract's fields (issue
 * 13): every request the diagnostic made, the code of what went wrong, the
 * proxy that answered and a client-side redirect it did not follow. Neutral
 * data; the service renders it as the `Details` message.
 */
export interface DiagnosticDetails {
  /** Stable code (failure-causes.ts) of how the diagnostic ended badly; null when it did not. */
  readonly code: string | null;
  readonly requests: readonly RequestRecord[];
  readonly proxy: ProxyMatch | null;
  readonly clientRedirect: ClientRedirect | null;
}

/**
 * One HTTP request a diagnostic made, with what came back or how it failed:
 * the one record of a request, which the API (the `Details` message), the
 * page (from the API's answer) and the CLI's tables all render.
 */
export interface RequestRecord {
  readonly url: string;
  /** The method whose answer (or failure) this reports. */
  readonly method: "GET" | "HEAD";
  /** True when a HEAD was tried first and this GET answered in its place. */
  readonly headFallback: boolean;
  readonly remoteAddress: string | null;
  readonly ipFamily: 4 | 6 | null;
  readonly httpVersion: string | null;
  readonly status: number | null;
  readonly timings: HopTimings;
  /** Sent over the connection of the redirect before it (same origin, kept alive): no connect and no TLS handshake in its time. */
  readonly connectionReused: boolean;
  readonly tls: TlsRecord | null;
  readonly failure: RequestFailureRecord | null;
  /** Only when the call asked for a report (CallOptions.report): what a report for people shows beyond the API's fields. */
  readonly report?: RequestReport;
}

/**
 * What a report for people (the CLI's tables) shows of a request beyond the
 * API's fields. With a report, the position a diagnostic stopped at without
 * its answer is recorded too (`stopped`), always last: the API never asks
 * for a report, so its list holds only requests that answered or failed.
 */
export interface RequestReport {
  /**
   * "position": it answered or failed a position of the check or the chain;
   * "final-page": a trace's extra GET of its final page (details' look for a
   * client-side redirect), which is no position; "stopped": the position was
   * refused by the target policy (`refusal`), or a trace ran out of budget
   * before the GET its HEAD's answer called for (the HEAD's answer kept).
   */
  readonly kind: "position" | "final-page" | "stopped";
  /** The reason phrase of the response; null without one. */
  readonly statusText: string | null;
  /** The response's Location, resolved; null without one. */
  readonly location: string | null;
  /** The probe's cause of a failure (ECONNREFUSED, ...); null unless it failed. */
  readonly cause: string | null;
  /** Why a stopped position was not requested; null for a request that was sent. */
  readonly refusal: PolicyRefusal | null;
}

/** The hop's TLS session, its certificate dated from the check. */
export interface TlsRecord extends Omit<TlsDetail, "certificate"> {
  readonly certificate: CertificateRecord | null;
}

export interface CertificateRecord extends PeerCertificate {
  /** Whole days from the check until validTo; negative once expired. */
  readonly daysRemaining: number;
}

export interface RequestFailureRecord {
  readonly stage: FailureStage;
  readonly code: string;
  readonly reason: string;
  readonly timedOut: boolean;
  readonly elapsedMs: number;
}

/** What a proxy's answer means, as far as its own documented signals tell. */
export type ProxyKind = "challenge" | "block" | "origin_error" | "unknown";

export interface ProxyMatch {
  /** Stable id of the provider (cloudflare, akamai, ...). */
  readonly provider: string;
  readonly kind: ProxyKind;
}

export interface ClientRedirect {
  readonly kind: "refresh_header" | "meta_refresh";
  /** Absolute, resolved against the page's URL. */
  readonly url: string;
  readonly delaySeconds: number;
}
