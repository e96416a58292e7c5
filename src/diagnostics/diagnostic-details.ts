import type { Registration } from "../registration/registration-lookup.js";
import { failureCode } from "../shared/failures.js";
import type { FailureStage } from "../shared/failures.js";
import type { ProbeFailure } from "../probe/failure.js";
import type { CapturedHead } from "../probe/http/head-capture.js";
import type {
  ChainCertificate,
  HopFailureTrace,
  HopOutcome,
  HopResponse,
  HopTimings,
  PeerCertificate,
  TlsDetail,
} from "../probe/hop-types.js";
import type { PolicyRefusal } from "../shared/failures.js";
import type { NameResolution } from "../probe/name-resolution.js";
import type { ProxyKind } from "./proxy-providers.js";
import { type TransportSecurity, transportSecurityOf } from "./transport-security.js";
import type { TlsVersionAttempt } from "../probe/hop-types.js";
import type { SearchSignals } from "./search-signals.js";

/**
 * What a person debugging a site wants beyond the contract's fields:
 * every request the diagnostic made, the code of what went wrong, the
 * proxy that answered and a client-side redirect it did not follow. Neutral
 * data; the service renders it as the `Details` message.
 */
export interface DiagnosticDetails {
  /** Stable code (src/shared/failures.ts) of how the diagnostic ended badly; null when it did not. */
  readonly code: string | null;
  readonly requests: readonly RequestRecord[];
  readonly proxy: ProxyMatch | null;
  readonly clientRedirect: ClientRedirect | null;
  /** Every name the diagnostic resolved, each lookup shown once (name-resolutions.ts); requests point here by index. */
  readonly resolutions: readonly NameResolution[];
  /** The first request made again over the IP family Happy Eyeballs did not pick; null when the first host has one family, or nothing reached an address. */
  readonly families: FamilyComparison | null;
  /** The first request made again to each address of its host (address-survey.ts); null when no family of the host has two addresses, or nothing reached an address. */
  readonly addresses: AddressSurvey | null;
  /** A handshake limited to each TLS version, to the first request's address (tls-version-survey.ts); null for an http first host, or a first request that never connected. */
  readonly tlsVersions: TlsVersionSurvey | null;
  /**
   * What the evidence above calls for (is-site-down has no warnings list in
   * the contract; redirect-check lists these in its own as well). Each kind
   * of evidence adds its own: one spread where the details are built.
   */
  readonly warnings: readonly EvidenceWarning[];
  /** What the final page tells search engines (search-signals.ts); null when it was no 2xx answer. */
  readonly search: SearchSignals | null;
  /** The first host's domain registration (RDAP, src/registration/); absent or null when none was looked up (an IP-literal host). */
  readonly registration?: Registration | null;
}

/** What one address gave the first request. */
export interface AddressAttempt {
  readonly address: string;
  readonly family: 4 | 6;
  /** answered (a response), failed (no response), refused (the policy sent nothing: the name's answers changed to one it refuses, or dropped this one). */
  readonly outcome: "answered" | "failed" | "refused";
  /** This row is the diagnostic's first request itself, which reached this address: nothing was sent again. */
  readonly firstRequest: boolean;
  readonly status: number | null;
  /** The stage a failed request failed in; null otherwise. */
  readonly failedStage: FailureStage | null;
  /** The failure table's code of a failure, or the policy's of a refusal; null when answered. */
  readonly code: string | null;
  /** In words; null when answered. */
  readonly reason: string | null;
  readonly connectMs: number | null;
  readonly tlsMs: number | null;
  readonly firstByteMs: number | null;
  /** The leaf certificate's SHA-256 fingerprint (colon-separated hex); null on http or before a certificate. */
  readonly certificateSha256: string | null;
}

/** details.addresses: every address of the first host (address-survey.ts), one row per address tried. */
export interface AddressSurvey {
  readonly attempts: readonly AddressAttempt[];
  /** Addresses of the name not tried: past MAX_ADDRESSES_PER_FAMILY of a family, or past what the lookup's record kept. */
  readonly untried: number;
  /** Two answering addresses gave different statuses. */
  readonly statusDiffers: boolean;
  /** Two handshakes showed different leaf certificates. */
  readonly certificateDiffers: boolean;
}

/** details.tlsVersions: the first host's TLS versions (tls-version-survey.ts). */
export interface TlsVersionSurvey {
  /** The address every handshake went to: the first request's. */
  readonly address: string;
  /** One per version, newest first; [] when the policy refused (nothing sent). */
  readonly attempts: readonly TlsVersionAttempt[];
  /** Why nothing was sent: the policy's refusal; null when the handshakes were tried. */
  readonly refusal: Pick<PolicyRefusal, "code" | "reason"> | null;
  /** Some accepted version's server chose h2 in ALPN (h2 is always offered, before http/1.1). */
  readonly h2: boolean;
}

/**
 * Both IP families of a diagnostic's first host (family-comparison.ts): the
 * first request made once more, over the family Happy Eyeballs did not pick.
 * Evidence only: the verdict and every contract field stay what the first
 * request saw.
 */
export interface FamilyComparison {
  /** The family the diagnostic's first request went over: the one Happy Eyeballs picked. */
  readonly pickedFamily: 4 | 6;
  /** The other family, the one this request was made over. */
  readonly otherFamily: 4 | 6;
  /** The first request made again to an address of the other family; null when the target policy refused it (nothing sent). */
  readonly request: RequestRecord | null;
  /** Why nothing was sent to the other family: the policy's code and sentence; null when the request was sent. */
  readonly refusal: { readonly code: string; readonly reason: string } | null;
  /** Both families answered, with different statuses. */
  readonly statusDiffers: boolean;
  /** Both handshakes showed a leaf certificate, and the two are not the same certificate (SHA-256 fingerprint). */
  readonly certificateDiffers: boolean;
}

/**
 * A warning the evidence calls for, shaped as redirect-check's warnings are
 * (TraceWarning, redirect-trace-result.ts, fits it): declared here because
 * the trace's result types import these details, and an import back would
 * make a circle.
 */
export interface EvidenceWarning {
  readonly code: string;
  readonly message: string;
  /** The request it concerns (1: the first); null for the diagnostic as a whole. */
  readonly hop: number | null;
  readonly severity: "info" | "warning" | "problem";
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
  /** The probe's own timings of the request (null for a phase that did not happen), shown as they are. */
  readonly timings: HopTimings;
  /** Sent over the connection of the redirect before it (same origin, kept alive): no connect and no TLS handshake in its time. */
  readonly connectionReused: boolean;
  readonly tls: TlsRecord | null;
  readonly failure: RequestFailureRecord | null;
  /**
   * The response's header fields as received (names as sent, in order, the
   * first 64 KiB of the head, Set-Cookie values redacted to the cookie's
   * name), and whether fields past that were left out; null without a
   * response. Never logged.
   */
  readonly responseHead: CapturedHead | null;
  /**
   * HTTPS answers only: the Strict-Transport-Security policy and whether
   * Alt-Svc advertises h3 (a browser ignores STS over http://); null for an
   * http:// answer and without a response.
   */
  readonly transportSecurity: TransportSecurity | null;
  /** The index in DiagnosticDetails.resolutions of the lookup this request used; null for an IP-literal host. */
  readonly resolution: number | null;
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
   * before the GET its HEAD's answer called for (the HEAD's answer kept);
   * "head-before-get": a trace's HEAD whose answer (or failure) sent a GET
   * to the same position, which the GET's record, next, answers.
   */
  readonly kind: "position" | "final-page" | "stopped" | "head-before-get";
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
export interface TlsRecord extends Omit<TlsDetail, "certificate" | "chain"> {
  readonly certificate: CertificateRecord | null;
  readonly chain: readonly ChainCertificateRecord[];
}

export interface ChainCertificateRecord extends ChainCertificate {
  /** Whole days from the check until validTo; negative once expired; 0 when validTo is "". */
  readonly daysRemaining: number;
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

/** What a proxy's answer means (kept with the provider table, which the page reads too). */
export type { ProxyKind } from "./proxy-providers.js";

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

// The records, built once per request where the diagnostic holds the prober's outcome.

/**
 * A request's own time in tenths of a millisecond: its timings' total, the
 * figure its record shows. A diagnostic's time (responseTime, totalTimeMs)
 * is the sum of these over the requests it counts, rounded half up to whole
 * milliseconds once, at the end: the contract's integer and the sum of the
 * details' totals never disagree by more than that rounding. Nothing was
 * sent for a refusal or our own overload: 0.
 */
export function requestTenths(outcome: HopOutcome): number {
  if (outcome.kind === "response") return Math.round(outcome.response.timings.totalMs * 10);
  if (outcome.kind === "failure") return Math.round(outcome.trace.timings.totalMs * 10);
  return 0;
}

/** Whole milliseconds of a sum of tenths, half up: the contract's integer figure. */
export function wholeMs(tenths: number): number {
  return Math.round(tenths / 10);
}

const DAY_MS = 86_400_000;

/** How the diagnostic sent the request. */
export interface SentAs {
  readonly url: string;
  readonly method: "GET" | "HEAD";
  readonly headFallback: boolean;
  /** The index of the request's lookup in the diagnostic's resolutions (ResolutionBook.add); null or absent for none. */
  readonly resolution?: number | null;
}

/** Which report facts to add (RequestReport.kind); null when the call asked for no report. */
export type ReportKind = RequestReport["kind"] | null;

/** The record of a request that got a response. */
export function answeredRecord(sent: SentAs, response: HopResponse, report: ReportKind = null, now: number = Date.now()): RequestRecord {
  const record = Object.assign({}, sent, {
    remoteAddress: response.remoteAddress,
    ipFamily: response.remoteFamily,
    httpVersion: response.httpVersion,
    status: response.status,
    timings: response.timings,
    connectionReused: response.connectionReused,
    tls: tlsRecord(response.tls, now),
    failure: null,
    responseHead: response.headFields,
    transportSecurity: response.url.startsWith("https:") ? transportSecurityOf(response.headers) : null,
    resolution: sent.resolution ?? null,
  });
  if (report === null) return record;
  return Object.assign(record, {
    report: { kind: report, statusText: response.statusText, location: response.location, cause: null, refusal: null },
  });
}

/**
 * The record of a request that got no response. `reason` is the sentence the
 * diagnostic shows for it (is-site-down names its own timeout), else the probe's.
 */
export function failedRecord(
  sent: SentAs,
  failure: ProbeFailure,
  trace: HopFailureTrace,
  reason: string = failure.reason,
  report: ReportKind = null,
  now: number = Date.now(),
): RequestRecord {
  const record = Object.assign({}, sent, {
    remoteAddress: failure.remoteAddress,
    ipFamily: failure.remoteAddress === null ? null : trace.remoteFamily,
    httpVersion: null,
    status: null,
    timings: trace.timings,
    connectionReused: trace.connectionReused,
    tls: tlsRecord(trace.tls, now),
    failure: { stage: failure.stage, code: failureCode(failure), reason, timedOut: failure.timedOut, elapsedMs: failure.elapsedMs },
    responseHead: null,
    transportSecurity: null,
    resolution: sent.resolution ?? null,
  });
  if (report === null) return record;
  return Object.assign(record, { report: { kind: report, statusText: null, location: null, cause: failure.cause, refusal: null } });
}

/** Nothing was sent: no phase happened. */
const NOT_SENT: HopTimings = Object.freeze({
  totalMs: 0,
  dnsMs: null,
  connectMs: null,
  tlsMs: null,
  waitingMs: null,
  receivingMs: null,
  otherMs: 0,
  firstByteMs: null,
});

/**
 * A report's record of the position a diagnostic stopped at without its
 * answer: refused by the target policy, or the HEAD answered (or failed)
 * before a trace ran out of budget for its GET.
 */
export function stoppedRecord(sent: SentAs, stoppedBy: HopOutcome): RequestRecord {
  if (stoppedBy.kind === "response") return answeredRecord(sent, stoppedBy.response, "stopped");
  if (stoppedBy.kind === "failure") return failedRecord(sent, stoppedBy.failure, stoppedBy.trace, stoppedBy.failure.reason, "stopped");
  return notSentRecord(sent, stoppedBy.kind === "refused" ? stoppedBy.refusal : null);
}

/** The record of a request that was sent, answered or failed; null for one that was not (refused, our overload). */
export function sentRecord(sent: SentAs, outcome: HopOutcome, report: ReportKind): RequestRecord | null {
  if (outcome.kind === "response") return answeredRecord(sent, outcome.response, report);
  if (outcome.kind === "failure") return failedRecord(sent, outcome.failure, outcome.trace, outcome.failure.reason, report);
  return null;
}

function notSentRecord(sent: SentAs, refusal: PolicyRefusal | null): RequestRecord {
  return Object.assign({}, sent, {
    remoteAddress: null,
    ipFamily: null,
    httpVersion: null,
    status: null,
    timings: NOT_SENT,
    connectionReused: false,
    tls: null,
    failure: null,
    responseHead: null,
    transportSecurity: null,
    resolution: sent.resolution ?? null,
    report: { kind: "stopped" as const, statusText: null, location: null, cause: null, refusal },
  });
}

function tlsRecord(tls: TlsDetail | null, now: number): TlsRecord | null {
  if (tls === null) return null;
  return Object.assign({}, tls, {
    certificate: tls.certificate === null ? null : certificateRecord(tls.certificate, now),
    chain: tls.chain.map((certificate) => certificateRecord(certificate, now)),
  });
}

/** daysRemaining is 0 when validTo is "" (a date the certificate does not say readably): an int32 in the answer, never NaN. */
function certificateRecord<C extends PeerCertificate | ChainCertificate>(
  certificate: C,
  now: number,
): C & { readonly daysRemaining: number } {
  const days = Math.floor((Date.parse(certificate.validTo) - now) / DAY_MS);
  return Object.assign({}, certificate, { daysRemaining: Number.isFinite(days) ? days : 0 });
}
