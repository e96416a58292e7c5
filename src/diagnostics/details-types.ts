import type { FailureStage } from "../probe/failure.js";
import type { HopTimings, PeerCertificate, TlsDetail } from "../probe/hop-types.js";

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

/** One HTTP request a diagnostic made, with what came back or how it failed. */
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
