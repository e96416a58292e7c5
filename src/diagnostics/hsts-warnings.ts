import type { HopResponse } from "../probe/hop-types.js";
import type { ChainEnding, TraceHop } from "./redirect-trace-result.js";
import { traceWarning, type TraceWarning } from "./redirect-trace-result.js";
import { hstsOf } from "./transport-security.js";

/** 180 days: below this a policy lapses between visits of a monthly reader; the preload list asks for a year. */
export const HSTS_SHORT_BELOW_SECONDS = 180 * 86_400;

/**
 * The HSTS warnings of a trace, from the final page alone: only its one
 * Strict-Transport-Security field is parsed, with or without details (the
 * hop's header map is always there), so the warning never depends on
 * details and costs a scan of one short value per trace.
 *
 * - `hsts_missing`: the chain started on http:// and its final page is HTTPS
 *   but sets no policy (none, an invalid one, or max-age=0, which removes it):
 *   the next http:// visit is unprotected again.
 * - `hsts_short`: the final HTTPS page sets a policy under 180 days.
 */
export function hstsWarnings(start: URL, chain: readonly TraceHop[], ending: ChainEnding, last: HopResponse | null): TraceWarning[] {
  if (ending.status !== "healthy" && ending.status !== "redirects_detected") return [];
  const final = chain.at(-1);
  if (final === undefined || last === null || !final.url.startsWith("https:")) return [];
  const reading = hstsOf(last.headers);
  const fromHttp = start.protocol === "http:";
  if (reading.kind !== "policy" || reading.policy.maxAge === 0) {
    if (!fromHttp) return [];
    const why = reading.kind === "missing" ? "sends no Strict-Transport-Security" : reading.kind === "invalid" ? "sends an invalid Strict-Transport-Security (ignored by browsers)" : "sends Strict-Transport-Security max-age=0, which removes the policy";
    return [traceWarning("hsts_missing", `The chain starts on http:// and its final HTTPS page ${final.url} ${why}: every http:// visit stays unprotected`, final.hop)];
  }
  if (reading.policy.maxAge < HSTS_SHORT_BELOW_SECONDS) {
    const days = Math.floor(reading.policy.maxAge / 86_400);
    return [traceWarning("hsts_short", `Strict-Transport-Security on ${final.url} has max-age=${reading.policy.maxAge} (${days} days), under 180 days`, final.hop)];
  }
  return [];
}
