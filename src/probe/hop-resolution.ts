import { failureCode } from "../failures.js";
import type { CnameChain } from "./cname-chain.js";
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
export function withResolution(outcome: HopOutcome, trace: HopTrace, host: string, resolution: Resolution, chain: CnameChain): HopOutcome {
  // Rounded as hopTimings rounds the phase, for a refusal, which has no timings.
  const dnsPhase = trace.dnsDoneAt === null ? 0 : Math.max(0, Math.round((trace.dnsDoneAt - trace.startedAt) * 10)) / 10;
  if (outcome.kind === "response") {
    const record = nameResolutionOf(host, resolution, chain, outcome.response.timings.dnsMs ?? dnsPhase, null);
    return record === null ? outcome : { kind: "response", response: Object.assign({}, outcome.response, { resolution: record }) };
  }
  if (outcome.kind === "failure") {
    const record = nameResolutionOf(host, resolution, chain, outcome.trace.timings.dnsMs ?? dnsPhase, failureCode(outcome.failure));
    return record === null ? outcome : Object.assign({}, outcome, { trace: Object.assign({}, outcome.trace, { resolution: record }) });
  }
  if (outcome.kind === "refused") {
    const record = nameResolutionOf(host, resolution, chain, dnsPhase, null);
    return record === null ? outcome : Object.assign({}, outcome, { resolution: record });
  }
  return outcome;
}
