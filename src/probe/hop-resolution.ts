import { causeInfo, failureCode } from "../shared/failures.js";
import type { CnameChain } from "./cname-chain.js";
import type { DnssecReading } from "./dnssec-query.js";
import { extendedErrorCause, extendedErrorsText } from "./extended-dns-error.js";
import type { HopOutcome } from "./hop-types.js";
import type { HopTrace } from "./hop-trace.js";
import { nameResolutionOf } from "./name-resolution.js";
import type { Resolution } from "./resolver.js";

// What a hop keeps of its lookup when details ask (HopRequest.describeResolution): the record on its outcome.

/**
 * A name DNS answered, or a failure a server spoke (NXDOMAIN behind a
 * dangling CNAME is the chain's own story); not a hosts-file answer, which
 * has no CNAMEs, and not silence, which the walk would only wait on again.
 */
export function hasChainToWalk(resolution: Resolution): boolean {
  const evidence = resolution.ok ? resolution.evidence : "evidence" in resolution ? resolution.evidence : undefined;
  if (evidence === undefined || evidence.source.kind === "hosts_file") return false;
  return resolution.ok || evidence.rcode !== null;
}

/** The outcome with the record of the name's resolution (name-resolution.ts), timed as its DNS phase. */
export function withResolution(
  outcome: HopOutcome,
  trace: HopTrace,
  host: string,
  resolution: Resolution,
  chain: CnameChain,
  dnssec: DnssecReading,
): HopOutcome {
  // Rounded as hopTimings rounds the phase, for a refusal, which has no timings.
  const dnsPhase = trace.dnsDoneAt === null ? 0 : Math.max(0, Math.round((trace.dnsDoneAt - trace.startedAt) * 10)) / 10;
  if (outcome.kind === "response") {
    const record = nameResolutionOf(host, resolution, chain, dnssec, outcome.response.timings.dnsMs ?? dnsPhase, null);
    return record === null ? outcome : { kind: "response", response: Object.assign({}, outcome.response, { resolution: record }) };
  }
  if (outcome.kind === "failure") {
    const record = nameResolutionOf(host, resolution, chain, dnssec, outcome.trace.timings.dnsMs ?? dnsPhase, failureCode(outcome.failure));
    return record === null ? outcome : Object.assign({}, outcome, { trace: Object.assign({}, outcome.trace, { resolution: record }) });
  }
  if (outcome.kind === "refused") {
    const record = nameResolutionOf(host, resolution, chain, dnssec, dnsPhase, null);
    return record === null ? outcome : Object.assign({}, outcome, { resolution: record });
  }
  return outcome;
}

/** The failure rows' rcodes, as c-ares names them (resolver.ts). */
const CARES_RCODES: Readonly<Record<string, string>> = { ESERVFAIL: "SERVFAIL", EREFUSED: "REFUSED", ENOTFOUND: "NXDOMAIN" };

/**
 * A DNS failure the resolver explained: when the DO query got the same
 * response code as the lookup and Extended DNS Errors with it, the failure
 * is named by the first error a row names (EDE 6 DNSSEC Bogus:
 * dns_dnssec_bogus) and its reason says each error, its extra-text included
 * (bounded and escaped by extended-dns-error.ts). Its time, stage and
 * timed-out flag stay the lookup's.
 */
export function explainedByExtendedErrors(outcome: HopOutcome, code: string, dnssec: DnssecReading): HopOutcome {
  if (outcome.kind !== "failure" || outcome.failure.stage !== "dns" || outcome.failure.timedOut) return outcome;
  if (dnssec.extendedErrors.length === 0 || CARES_RCODES[code] === undefined || CARES_RCODES[code] !== dnssec.rcode) return outcome;
  const cause = extendedErrorCause(dnssec.extendedErrors) ?? outcome.failure.cause;
  const reason = `${causeInfo(cause, "dns").reason}${extendedErrorsText(dnssec.extendedErrors)}`;
  return Object.assign({}, outcome, { failure: Object.assign({}, outcome.failure, { cause, reason }) });
}
