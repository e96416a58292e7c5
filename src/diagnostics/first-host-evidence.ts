/**
 * What details learn about a diagnostic's first host beyond its first
 * request, all started the moment that request ends and awaited only to fill
 * details: the other IP family (family-comparison.ts), every address
 * (address-survey.ts) and the TLS versions (tls-version-survey.ts). None
 * changes the verdict, a figure of the contract or the credits charged.
 *
 * The families and the addresses overlap: when every address is tried, the
 * other family's are among them, so the families' comparison is read from
 * those requests (the other family's first address that connected, as Happy
 * Eyeballs would have settled on it, else its first) instead of sending a
 * request of its own: no address is asked twice.
 */
import type { HopOutcome, Prober } from "../probe/hop-types.js";
import { type AddressEvidence, type AddressSurvey, startAddressSurvey } from "./address-survey.js";
import type { DiagnosticDetails, FamilyComparison } from "./diagnostic-details.js";
import {
  type FamilyEvidence,
  familyEvidenceOf,
  type FamilyRequestLimits,
  type FirstRequest,
  pickedFamilyOf,
  startFamilyRequest,
} from "./family-comparison.js";
import type { TraceWarning } from "./redirect-trace-result.js";
import { startTlsVersionSurvey, type TlsVersionSurvey } from "./tls-version-survey.js";

export interface FirstHostEvidence {
  readonly families: FamilyComparison | null;
  readonly addresses: AddressSurvey | null;
  readonly tlsVersions: TlsVersionSurvey | null;
  /** The families', then the addresses', then the versions' warnings. */
  readonly warnings: readonly TraceWarning[];
}

/** Starts every piece that applies; each resolves to null when it has nothing to say or was cut short. */
export async function firstHostEvidence(prober: Prober, first: FirstRequest, limits: FamilyRequestLimits): Promise<FirstHostEvidence> {
  const addresses = startAddressSurvey(prober, first, limits);
  const families: Promise<FamilyEvidence | null> | null =
    addresses === null ? startFamilyRequest(prober, first, limits) : addresses.then((evidence) => familiesFromAddresses(first, evidence));
  const versions = startTlsVersionSurvey(prober, first, limits);
  const [family, surveyed, versioned] = await Promise.all([families, addresses, versions]);
  return {
    families: family?.comparison ?? null,
    addresses: surveyed?.survey ?? null,
    tlsVersions: versioned?.survey ?? null,
    warnings: [...(family?.warnings ?? []), ...(surveyed?.warnings ?? []), ...(versioned?.warnings ?? [])],
  };
}

/** The other family's outcome among the addresses' requests: the first that connected, else the first. */
function familiesFromAddresses(first: FirstRequest, evidence: AddressEvidence | null): FamilyEvidence | null {
  const picked = pickedFamilyOf(first);
  if (evidence === null || picked === null) return null;
  const other = evidence.survey.attempts.filter(({ family, firstRequest }) => family !== picked && !firstRequest);
  const outcomes = other.flatMap(({ address }) => {
    const outcome = evidence.outcomes.get(address);
    return outcome === undefined ? [] : [outcome];
  });
  const chosen = outcomes.find(connected) ?? outcomes[0];
  return chosen === undefined ? null : familyEvidenceOf(first, chosen);
}

function connected(outcome: HopOutcome): boolean {
  if (outcome.kind === "response") return true;
  return outcome.kind === "failure" && outcome.failure.stage !== "dns" && outcome.failure.stage !== "connect";
}

/** Details with the evidence in, and its warnings after those already there. */
export function withFirstHostEvidence(details: DiagnosticDetails, evidence: FirstHostEvidence | null): DiagnosticDetails {
  if (evidence === null) return details;
  return Object.assign({}, details, {
    families: evidence.families,
    addresses: evidence.addresses,
    tlsVersions: evidence.tlsVersions,
    warnings: [...details.warnings, ...evidence.warnings],
  });
}
