import { failureCode } from "../probe/failure-causes.js";
import type { ProbeFailure } from "../probe/failure.js";
import type { HopFailureTrace, HopOutcome, HopResponse, HopTimings, PeerCertificate, TlsDetail } from "../probe/hop-types.js";
import type { PolicyRefusal } from "../probe/refusal.js";
import type { CertificateRecord, RequestRecord, RequestReport, TlsRecord } from "./details-types.js";

const DAY_MS = 86_400_000;

/** How the diagnostic sent the request. */
export interface SentAs {
  readonly url: string;
  readonly method: "GET" | "HEAD";
  readonly headFallback: boolean;
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
  });
  if (report === null) return record;
  return Object.assign(record, { report: { kind: report, statusText: response.statusText, location: response.location, cause: null, refusal: null } });
}

/**
 * The record of a request that got no response. `reason` is the sentence the
 * diagnostic shows for it (is-site-down names its own timeout), else the probe's.
 */
export function failedRecord(sent: SentAs, failure: ProbeFailure, trace: HopFailureTrace, reason: string = failure.reason, report: ReportKind = null, now: number = Date.now()): RequestRecord {
  const record = Object.assign({}, sent, {
    remoteAddress: failure.remoteAddress,
    ipFamily: failure.remoteAddress === null ? null : trace.remoteFamily,
    httpVersion: null,
    status: null,
    timings: trace.timings,
    connectionReused: trace.connectionReused,
    tls: tlsRecord(trace.tls, now),
    failure: { stage: failure.stage, code: failureCode(failure), reason, timedOut: failure.timedOut, elapsedMs: failure.elapsedMs },
  });
  if (report === null) return record;
  return Object.assign(record, { report: { kind: report, statusText: null, location: null, cause: failure.cause, refusal: null } });
}

/** Nothing was sent: no phase happened. */
const NOT_SENT: HopTimings = Object.freeze({ totalMs: 0, dnsMs: null, connectMs: null, tlsMs: null, firstByteMs: null });

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
    report: { kind: "stopped" as const, statusText: null, location: null, cause: null, refusal },
  });
}

function tlsRecord(tls: TlsDetail | null, now: number): TlsRecord | null {
  if (tls === null) return null;
  return Object.assign({}, tls, { certificate: tls.certificate === null ? null : certificateRecord(tls.certificate, now) });
}

/** daysRemaining is 0 when validTo is "" (a date the certificate does not say readably): an int32 in the answer, never NaN. */
function certificateRecord(certificate: PeerCertificate, now: number): CertificateRecord {
  const days = Math.floor((Date.parse(certificate.validTo) - now) / DAY_MS);
  return Object.assign({}, certificate, { daysRemaining: Number.isFinite(days) ? days : 0 });
}
