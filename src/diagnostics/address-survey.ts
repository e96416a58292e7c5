/**
 * Every address of a diagnostic's first host: when its name has several A or
 * AAAA records, the first request is made once more to each address (the one
 * the first request reached is its own row, not sent again), so the address
 * one visitor in three is sent to, and that never answers, is seen. Evidence
 * for details only: the verdict and every contract field stay what the first
 * request saw.
 */
import { failureCode, type PolicyRefusal } from "../shared/failures.js";
import type { AddressAttempt, AddressSurvey } from "./diagnostic-details.js";
import type { HopOutcome, Prober } from "../probe/hop-types.js";
import type { NameResolution } from "../probe/name-resolution.js";
import type { FamilyRequestLimits, FirstRequest } from "./family-comparison.js";
import { traceWarning, type TraceWarning } from "./redirect-trace-result.js";

/** Addresses tried of each family; the rest are counted. Eight is more than almost any site publishes, and bounds what one check sends. */
export const MAX_ADDRESSES_PER_FAMILY = 8;

export type { AddressAttempt, AddressSurvey } from "./diagnostic-details.js";

/** The survey, its warnings, and each address's own outcome (the families' comparison reads them). */
export interface AddressEvidence {
  readonly survey: AddressSurvey;
  readonly warnings: readonly TraceWarning[];
  /** The outcome of each request sent, by address; the first request's address is not in it. */
  readonly outcomes: ReadonlyMap<string, HopOutcome>;
}

/** The addresses to try, in the order the name listed them, and how many were left out. */
export interface AddressPlan {
  readonly addresses: readonly { readonly address: string; readonly family: 4 | 6 }[];
  readonly untried: number;
}

/**
 * Which addresses the first request's lookup gave: null when there is no
 * survey to make (an IP literal, no lookup record, or no family with two
 * addresses: the first request and details.families already reach each).
 */
export function addressPlan(resolution: NameResolution | undefined): AddressPlan | null {
  if (resolution === undefined || resolution.code !== null) return null;
  const v4 = resolution.answers.filter(({ family }) => family === 4);
  const v6 = resolution.answers.filter(({ family }) => family === 6);
  if (v4.length < 2 && v6.length < 2) return null;
  const kept = [...v4.slice(0, MAX_ADDRESSES_PER_FAMILY), ...v6.slice(0, MAX_ADDRESSES_PER_FAMILY)];
  return {
    addresses: kept.map(({ address, family }) => ({ address, family })),
    untried: resolution.answers.length - kept.length + resolution.answersOmitted,
  };
}

/**
 * Starts a request to every planned address but the first request's, all at
 * once, when the first request has ended; null when there is no survey to
 * make. Awaited only to fill details. Resolves to null when our own capacity
 * failed one of them or the diagnostic's signal cut them short: that says
 * nothing of the addresses.
 */
export function startAddressSurvey(
  prober: Prober,
  first: FirstRequest,
  limits: FamilyRequestLimits,
): Promise<AddressEvidence | null> | null {
  const resolution = first.outcome.kind === "response" ? first.outcome.response.resolution : first.outcome.trace.resolution;
  const plan = addressPlan(resolution);
  const reached = first.outcome.kind === "response" ? first.outcome.response.remoteAddress : first.outcome.failure.remoteAddress;
  if (plan === null || reached === null) return null;
  return survey(prober, first, limits, plan, reached);
}

async function survey(
  prober: Prober,
  first: FirstRequest,
  limits: FamilyRequestLimits,
  plan: AddressPlan,
  reached: string,
): Promise<AddressEvidence | null> {
  const others = plan.addresses.filter(({ address }) => address !== reached);
  const outcomes = await Promise.all(
    others.map(({ address }) =>
      prober.hop({
        url: first.url,
        method: first.method,
        timeoutMs: limits.timeoutMs,
        ports: limits.ports,
        address,
        captureHead: true,
        ...(limits.signal === undefined ? {} : { signal: limits.signal }),
      }),
    ),
  );
  if (limits.signal?.aborted === true || outcomes.some(({ kind }) => kind === "overloaded")) return null;
  const byAddress = new Map(others.map(({ address }, index) => [address, outcomes[index] as HopOutcome]));
  const attempts = plan.addresses.flatMap(({ address, family }) => {
    if (address === reached) return [attemptOf(address, family, first.outcome, true)];
    const outcome = byAddress.get(address);
    return outcome === undefined ? [] : [attemptOf(address, family, outcome, false)];
  });
  const statuses = new Set(attempts.flatMap(({ status }) => (status === null ? [] : [status])));
  const leaves = new Set(attempts.flatMap(({ certificateSha256 }) => (certificateSha256 === null ? [] : [certificateSha256])));
  const result: AddressSurvey = { attempts, untried: plan.untried, statusDiffers: statuses.size > 1, certificateDiffers: leaves.size > 1 };
  return { survey: result, warnings: surveyWarnings(result, first), outcomes: byAddress };
}

function attemptOf(address: string, family: 4 | 6, outcome: HopOutcome, firstRequest: boolean): AddressAttempt {
  const base = { address, family, firstRequest };
  if (outcome.kind === "response") {
    const { response } = outcome;
    return Object.assign(base, {
      outcome: "answered" as const,
      status: response.status,
      failedStage: null,
      code: null,
      reason: null,
      connectMs: response.timings.connectMs,
      tlsMs: response.timings.tlsMs,
      firstByteMs: response.timings.firstByteMs,
      certificateSha256: response.tls?.certificate?.fingerprintSha256 ?? null,
    });
  }
  if (outcome.kind === "failure") {
    const { failure, trace } = outcome;
    return Object.assign(base, {
      outcome: "failed" as const,
      status: null,
      failedStage: failure.stage,
      code: failureCode(failure),
      reason: failure.reason,
      connectMs: trace.timings.connectMs,
      tlsMs: trace.timings.tlsMs,
      firstByteMs: trace.timings.firstByteMs,
      certificateSha256: trace.tls?.certificate?.fingerprintSha256 ?? null,
    });
  }
  const refusal: PolicyRefusal | null = outcome.kind === "refused" ? outcome.refusal : null;
  return Object.assign(base, {
    outcome: "refused" as const,
    status: null,
    failedStage: null,
    code: refusal?.code ?? null,
    reason: refusal?.reason ?? null,
    connectMs: null,
    tlsMs: null,
    firstByteMs: null,
    certificateSha256: null,
  });
}

/**
 * `address_unreachable`, one naming every address whose request failed
 * while another answered (all failing is the verdict's story, not an
 * address's), and `addresses_disagree` when answering addresses gave
 * different statuses or showed different certificates. A refusal is ours, not the site's: no warning.
 */
function surveyWarnings(survey: AddressSurvey, first: FirstRequest): TraceWarning[] {
  const target = `${first.method} ${first.url.href}`;
  const warnings: TraceWarning[] = [];
  const failed = survey.attempts.filter(({ outcome }) => outcome === "failed");
  const answered = survey.attempts.filter(({ outcome }) => outcome === "answered");
  if (failed.length > 0 && answered.length > 0) {
    const named = failed.map(({ address, reason }) => `${address} (${reason ?? "failed"})`).join(", ");
    warnings.push(
      traceWarning(
        "address_unreachable",
        `${target} failed at ${failed.length} of ${failed.length + answered.length} addresses: ${named}`,
        1,
      ),
    );
  }
  const differences: string[] = [];
  if (survey.statusDiffers)
    differences.push(`answers ${answered.map(({ address, status }) => `${status ?? "nothing"} at ${address}`).join(", ")}`);
  if (survey.certificateDiffers) {
    const shown = survey.attempts.filter(({ certificateSha256 }) => certificateSha256 !== null);
    differences.push(
      `shows different certificates: ${shown.map(({ address, certificateSha256 }) => `SHA-256 ${shortPrint(certificateSha256 ?? "")} at ${address}`).join(", ")}`,
    );
  }
  if (differences.length > 0) warnings.push(traceWarning("addresses_disagree", `${target} ${differences.join("; it ")}`, 1));
  return warnings;
}

/** The first and last bytes of a colon-separated fingerprint: enough to tell two apart in a sentence. */
function shortPrint(fingerprint: string): string {
  return fingerprint.length <= 23 ? fingerprint : `${fingerprint.slice(0, 11)}…${fingerprint.slice(-11)}`;
}
