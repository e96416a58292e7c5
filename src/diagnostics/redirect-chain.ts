import { isRedirectStatus } from "../probe/http/exchange-types.js";
import type { HopResponse } from "../probe/hop-types.js";
import { type ChainEnding, type RedirectTraceResult, type TraceHop, traceWarning, type TraceWarning } from "./redirect-trace-result.js";
import { hstsOf } from "./transport-security.js";

// Reading a chain of redirects: which statuses redirect, when two URLs are
// the same visit, the warnings read off a finished chain, and whether it
// meets what a site migration expects of it.

// The probe keeps a connection only for a redirect, so the one definition of a redirect status lives there.
export { isRedirectStatus };

/** Redirects that say "this may change": the chain can differ tomorrow. */
const TEMPORARY_STATUSES: ReadonlySet<number> = new Set([302, 303, 307]);

function isTemporaryRedirect(status: number): boolean {
  return TEMPORARY_STATUSES.has(status);
}

/**
 * The key used to recognise a URL already visited. The WHATWG serialisation
 * already lower-cases scheme and host, drops a default port, resolves dot
 * segments, normalises percent-encoding of the host and IDNA; the fragment is
 * dropped because it never reaches the server, so `/a#x` and `/a#y` are the
 * same request. Path and query stay case-sensitive and in order, as servers
 * may treat them so.
 */
export function loopKey(url: URL): string {
  const copy = new URL(url.href);
  copy.hash = "";
  return copy.href;
}

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

/** 180 days: below this a policy lapses between visits of a monthly reader; the preload list asks for a year. */
const HSTS_SHORT_BELOW_SECONDS = 180 * 86_400;

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
    const why =
      reading.kind === "missing"
        ? "sends no Strict-Transport-Security"
        : reading.kind === "invalid"
          ? "sends an invalid Strict-Transport-Security (ignored by browsers)"
          : "sends Strict-Transport-Security max-age=0, which removes the policy";
    return [
      traceWarning(
        "hsts_missing",
        `The chain starts on http:// and its final HTTPS page ${final.url} ${why}: every http:// visit stays unprotected`,
        final.hop,
      ),
    ];
  }
  if (reading.policy.maxAge < HSTS_SHORT_BELOW_SECONDS) {
    const days = Math.floor(reading.policy.maxAge / 86_400);
    return [
      traceWarning(
        "hsts_short",
        `Strict-Transport-Security on ${final.url} has max-age=${reading.policy.maxAge} (${days} days), under 180 days`,
        final.hop,
      ),
    ];
  }
  return [];
}

function redirectWarnings(hop: TraceHop): TraceWarning[] {
  const warnings: TraceWarning[] = [];
  if (isTemporaryRedirect(hop.status)) {
    warnings.push(
      traceWarning(
        "temporary_redirect",
        `Hop ${hop.hop} is a temporary redirect (${hop.redirectType}); a 301 or 308 is kept by browsers and search engines`,
        hop.hop,
      ),
    );
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

/** What a site migration asks of one old URL's chain. */
export type ExpectationVerdict = { readonly matches: true } | { readonly matches: false; readonly reason: string };

const PERMANENT: ReadonlySet<number> = new Set([301, 308]);

/**
 * Judges a finished trace against the URL it is expected to end at, in the
 * order a person auditing a migration would: the chain must end (not loop,
 * fail or time out), every redirect on it must be permanent (301 or 308: a
 * temporary one is not followed by search engines' index), it must never
 * go from https to http, it must end at the expected URL (both WHATWG-
 * serialised, fragment dropped, as loops are recognised), and with a 2xx.
 * The first rule broken is the reason.
 */
export function judgeExpectation(result: RedirectTraceResult, expected: string): ExpectationVerdict {
  let expectedKey: string;
  try {
    expectedKey = loopKey(new URL(expected));
  } catch {
    return { matches: false, reason: `the expected final URL "${expected}" is not an absolute URL` };
  }
  if (result.chainStatus !== "healthy" && result.chainStatus !== "redirects_detected") {
    // The ids are the contract's names in snake_case: "redirect_loop" reads "redirect loop".
    return { matches: false, reason: `the chain did not end: ${result.chainStatus.replaceAll("_", " ")}` };
  }
  for (const hop of result.chain) {
    if (isRedirectStatus(hop.status) && !PERMANENT.has(hop.status)) {
      return {
        matches: false,
        reason: `hop ${hop.hop} is a temporary redirect (${hop.redirectType ?? hop.status}); a migration needs 301 or 308`,
      };
    }
    if (hop.url.startsWith("https:") && hop.location?.startsWith("http:") === true) {
      return { matches: false, reason: `hop ${hop.hop} downgrades from https to http` };
    }
  }
  const finalKey = loopKey(new URL(result.finalUrl));
  if (finalKey !== expectedKey) return { matches: false, reason: `the chain ends at ${finalKey}, not at ${expectedKey}` };
  const status = result.finalStatus;
  if (status === null || status < 200 || status > 299)
    return { matches: false, reason: `the final URL answers ${status ?? "nothing"}, not a 2xx` };
  return { matches: true };
}
