/**
 * Both IP families of a diagnostic's first host: when its name has A and
 * AAAA addresses, the first request is made once more over the family Happy
 * Eyeballs did not pick, so a broken IPv6 (or IPv4) that a browser's
 * fallback hides is seen. Evidence for details only: the verdict and every
 * contract field stay what the first request saw.
 */
import { isIP } from "node:net";
import type { AbortWatch } from "../probe/clock.js";
import type { ProbeFailure } from "../probe/failure.js";
import type { HopFailureTrace, HopOutcome, HopResponse, PortRule, Prober } from "../probe/hop-types.js";
import { answeredRecord, type DiagnosticDetails, failedRecord, type FamilyComparison } from "./diagnostic-details.js";
import { traceWarning, type TraceWarning } from "./redirect-trace-result.js";

export type { FamilyComparison } from "./diagnostic-details.js";

/** The first request as the diagnostic made it, and what it came to: an answer, or a failure that reached an address. */
export interface FirstRequest {
  readonly url: URL;
  readonly method: "GET" | "HEAD";
  readonly outcome:
    | { readonly kind: "response"; readonly response: HopResponse }
    | { readonly kind: "failure"; readonly failure: ProbeFailure; readonly trace: HopFailureTrace };
}

/** The comparison for details, and the warnings it calls for. */
export interface FamilyEvidence {
  readonly comparison: FamilyComparison;
  readonly warnings: readonly TraceWarning[];
}

export interface FamilyRequestLimits {
  /** The diagnostic's own per-request timeout. */
  readonly timeoutMs: number;
  readonly ports: PortRule;
  /** Ends the request with the diagnostic (the caller gone, a trace's budget spent). */
  readonly signal: AbortWatch | undefined;
}

/**
 * Starts the other family's request as soon as the first request has told
 * which family was picked; null when there is nothing to compare (an IP
 * literal, a first request that never reached an address). It runs beside
 * the rest of the diagnostic and is awaited only to fill details, so the
 * verdict never waits on it. Resolves to null when the name has no address
 * of the other family (nothing sent), when our own capacity failed it, or
 * when the diagnostic's signal cut it short: that says nothing of the family.
 */
export function startFamilyRequest(
  prober: Prober,
  first: FirstRequest,
  limits: FamilyRequestLimits,
): Promise<FamilyEvidence | null> | null {
  const pickedFamily = pickedFamilyOf(first);
  if (pickedFamily === null) return null;
  return otherFamilyEvidence(prober, first, limits, pickedFamily, pickedFamily === 6 ? 4 : 6);
}

async function otherFamilyEvidence(
  prober: Prober,
  first: FirstRequest,
  limits: FamilyRequestLimits,
  pickedFamily: 4 | 6,
  otherFamily: 4 | 6,
): Promise<FamilyEvidence | null> {
  const outcome = await prober.hop({
    url: first.url,
    method: first.method,
    timeoutMs: limits.timeoutMs,
    ports: limits.ports,
    family: otherFamily,
    captureHead: true,
    ...(limits.signal === undefined ? {} : { signal: limits.signal }),
  });
  if (limits.signal?.aborted === true) return null;
  return familyEvidenceOf(first, outcome);
}

/** The family the first request went over; null when it reached no address (nothing to compare). */
export function pickedFamilyOf(first: FirstRequest): 4 | 6 | null {
  if (isIP(first.url.hostname.replace(/^\[|\]$/g, "")) !== 0) return null;
  return first.outcome.kind === "response" ? first.outcome.response.remoteFamily : first.outcome.trace.remoteFamily;
}

/**
 * The comparison of the first request with `outcome`, the same request over
 * the other family: made here by a Happy Eyeballs request of its own, or
 * taken from details' request to each address (address-survey.ts) when that
 * one tried the other family's addresses already. Null when it says nothing
 * (no address of that family, our own overload).
 */
export function familyEvidenceOf(first: FirstRequest, outcome: HopOutcome): FamilyEvidence | null {
  const pickedFamily = pickedFamilyOf(first);
  if (pickedFamily === null || outcome.kind === "overloaded") return null;
  const otherFamily = pickedFamily === 6 ? 4 : 6;
  if (outcome.kind === "refused") {
    // The name has no address of that family: a single-family host, and no request was made.
    if (outcome.refusal.rule === "no_address") return null;
    const refusal = { code: outcome.refusal.code, reason: outcome.refusal.reason };
    return {
      comparison: { pickedFamily, otherFamily, request: null, refusal, statusDiffers: false, certificateDiffers: false },
      warnings: [],
    };
  }
  const sent = { url: first.url.href, method: first.method, headFallback: false };
  const request = outcome.kind === "response" ? answeredRecord(sent, outcome.response) : failedRecord(sent, outcome.failure, outcome.trace);
  const pickedStatus = first.outcome.kind === "response" ? first.outcome.response.status : null;
  const pickedLeaf = leafOf(first.outcome.kind === "response" ? first.outcome.response.tls : first.outcome.trace.tls);
  const otherLeaf = request.tls?.certificate?.fingerprintSha256 ?? null;
  const comparison: FamilyComparison = {
    pickedFamily,
    otherFamily,
    request,
    refusal: null,
    statusDiffers: pickedStatus !== null && request.status !== null && pickedStatus !== request.status,
    certificateDiffers: pickedLeaf !== null && otherLeaf !== null && pickedLeaf !== otherLeaf,
  };
  return { comparison, warnings: familyWarnings(comparison, first) };
}

function leafOf(tls: HopResponse["tls"]): string | null {
  return tls?.certificate?.fingerprintSha256 ?? null;
}

const FAMILY_NAMES = { 4: "IPv4", 6: "IPv6" } as const;

/**
 * The warnings a comparison calls for, each about the first request (hop 1):
 * one family failed while the other answered (`ipv6_unreachable` or
 * `ipv4_unreachable`, named after the family that failed; a failure whose
 * handshake showed another certificate is a disagreement instead), or both
 * answered but differently (`families_disagree`). Both failing, or a
 * refusal of ours, is no warning: the verdict already says the first, and
 * the second is not the site's doing.
 */
function familyWarnings(comparison: FamilyComparison, first: FirstRequest): TraceWarning[] {
  if (comparison.request === null) return [];
  const other = comparison.request;
  const picked = FAMILY_NAMES[comparison.pickedFamily];
  const otherName = FAMILY_NAMES[comparison.otherFamily];
  const target = `${first.method} ${first.url.href}`;
  const differences: string[] = [];
  if (comparison.statusDiffers && first.outcome.kind === "response") {
    differences.push(
      `answers ${first.outcome.response.status} over ${picked} (${first.outcome.response.remoteAddress}) but ${other.status ?? "nothing"} over ${otherName}${at(other.remoteAddress)}`,
    );
  }
  if (comparison.certificateDiffers) {
    const pickedLeaf = leafOf(first.outcome.kind === "response" ? first.outcome.response.tls : first.outcome.trace.tls) ?? "";
    const otherLeaf = other.tls?.certificate?.fingerprintSha256 ?? "";
    differences.push(
      `shows one certificate over ${picked} (SHA-256 ${shortPrint(pickedLeaf)}) and another over ${otherName} (SHA-256 ${shortPrint(otherLeaf)})`,
    );
  }
  if (differences.length > 0) return [traceWarning("families_disagree", `${target} ${differences.join("; it ")}`, 1)];
  if (first.outcome.kind === "response" && other.failure !== null) {
    return [
      traceWarning(
        unreachableCode(comparison.otherFamily),
        `${target} answered ${first.outcome.response.status} over ${picked} (${first.outcome.response.remoteAddress}) but failed over ${otherName}${at(other.remoteAddress)}: ${other.failure.reason}`,
        1,
      ),
    ];
  }
  if (first.outcome.kind === "failure" && other.status !== null) {
    return [
      traceWarning(
        unreachableCode(comparison.pickedFamily),
        `${target} failed over ${picked}${at(first.outcome.failure.remoteAddress)}: ${first.outcome.failure.reason}; over ${otherName}${at(other.remoteAddress)} it answered ${other.status}`,
        1,
      ),
    ];
  }
  return [];
}

function unreachableCode(family: 4 | 6): "ipv4_unreachable" | "ipv6_unreachable" {
  return family === 6 ? "ipv6_unreachable" : "ipv4_unreachable";
}

function at(address: string | null): string {
  return address === null ? "" : ` (${address})`;
}

/** The first and last bytes of a colon-separated fingerprint: enough to tell two apart in a sentence. */
function shortPrint(fingerprint: string): string {
  return fingerprint.length <= 23 ? fingerprint : `${fingerprint.slice(0, 11)}…${fingerprint.slice(-11)}`;
}

/** Details with the comparison in, and its warnings after those already there. */
export function withFamilyEvidence(details: DiagnosticDetails, evidence: FamilyEvidence | null): DiagnosticDetails {
  if (evidence === null) return details;
  return Object.assign({}, details, { families: evidence.comparison, warnings: [...details.warnings, ...evidence.warnings] });
}
