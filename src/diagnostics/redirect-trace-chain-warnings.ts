import type { ChainEnding, TraceHop } from "./redirect-trace-types.js";
import { isRedirectStatus, isTemporaryRedirect } from "./redirect-trace-url.js";
import { traceWarning, type TraceWarning } from "./warnings.js";

/** Chains longer than this many redirects cost every visitor a round trip per hop; worth a warning. */
const LONG_CHAIN_REDIRECTS = 3;

/**
 * Warnings read off the finished chain itself: what each redirect does, how
 * long the chain is, and how it ends. Warnings about events along the way
 * (fallbacks, failures, loops) are raised where they happen.
 */
export function chainWarnings(chain: readonly TraceHop[], ending: ChainEnding): TraceWarning[] {
  const warnings: TraceWarning[] = chain.flatMap(redirectWarnings);

  const redirects = chain.filter((hop) => isRedirectStatus(hop.status)).length;
  if (redirects > LONG_CHAIN_REDIRECTS) {
    warnings.push(traceWarning("long_chain", `The chain has ${redirects} redirects; more than ${LONG_CHAIN_REDIRECTS} slows every visit`));
  }

  const last = chain.at(-1);
  if (ending.finalStatus !== null && ending.finalStatus >= 400 && last !== undefined) {
    warnings.push(traceWarning("final_status_error", `The final response is ${last.status} ${last.statusText}`, last.hop));
  }
  return warnings;
}

function redirectWarnings(hop: TraceHop): TraceWarning[] {
  const warnings: TraceWarning[] = [];
  if (isTemporaryRedirect(hop.status)) {
    warnings.push(traceWarning("temporary_redirect", `Hop ${hop.hop} is a temporary redirect (${hop.redirectType}); a 301 or 308 is kept by browsers and search engines`, hop.hop));
  }
  if (hop.location === null) return warnings;
  const from = new URL(hop.url);
  const to = new URL(hop.location);
  if (from.protocol === "https:" && to.protocol === "http:") {
    warnings.push(traceWarning("https_downgrade", `Hop ${hop.hop} redirects from HTTPS to plain HTTP: ${hop.location}`, hop.hop));
  }
  if (from.hostname !== to.hostname) {
    warnings.push(traceWarning("host_changed", `Hop ${hop.hop} moves from host ${from.hostname} to ${to.hostname}`, hop.hop));
  }
  return warnings;
}
