import { failureCode } from "../probe/failure-causes.js";
import type { ProbeFailure } from "../probe/failure.js";
import type { HopFailureTrace, HopResponse, PeerCertificate, TlsDetail } from "../probe/hop-types.js";
import type { CertificateRecord, RequestRecord, TlsRecord } from "./details-types.js";

const DAY_MS = 86_400_000;

/** How the diagnostic sent the request. */
export interface SentAs {
  readonly url: string;
  readonly method: "GET" | "HEAD";
  readonly headFallback: boolean;
}

/** The record of a request that got a response. */
export function answeredRecord(sent: SentAs, response: HopResponse, now: number = Date.now()): RequestRecord {
  return Object.assign({}, sent, {
    remoteAddress: response.remoteAddress,
    ipFamily: response.remoteFamily,
    httpVersion: response.httpVersion,
    status: response.status,
    timings: response.timings,
    connectionReused: response.connectionReused,
    tls: tlsRecord(response.tls, now),
    failure: null,
  });
}

/**
 * The record of a request that got no response. `reason` is the sentence the
 * diagnostic shows for it (is-site-down names its own timeout), else the probe's.
 */
export function failedRecord(sent: SentAs, failure: ProbeFailure, trace: HopFailureTrace, reason: string = failure.reason, now: number = Date.now()): RequestRecord {
  return Object.assign({}, sent, {
    remoteAddress: failure.remoteAddress,
    ipFamily: failure.remoteAddress === null ? null : trace.remoteFamily,
    httpVersion: null,
    status: null,
    timings: trace.timings,
    connectionReused: trace.connectionReused,
    tls: tlsRecord(trace.tls, now),
    failure: { stage: failure.stage, code: failureCode(failure), reason, timedOut: failure.timedOut, elapsedMs: failure.elapsedMs },
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
