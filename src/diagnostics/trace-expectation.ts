import type { RedirectTraceResult } from "./redirect-trace-types.js";
import { isRedirectStatus, loopKey } from "./redirect-trace-url.js";

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
      return { matches: false, reason: `hop ${hop.hop} is a temporary redirect (${hop.redirectType ?? hop.status}); a migration needs 301 or 308` };
    }
    if (hop.url.startsWith("https:") && hop.location?.startsWith("http:") === true) {
      return { matches: false, reason: `hop ${hop.hop} downgrades from https to http` };
    }
  }
  const finalKey = loopKey(new URL(result.finalUrl));
  if (finalKey !== expectedKey) return { matches: false, reason: `the chain ends at ${finalKey}, not at ${expectedKey}` };
  const status = result.finalStatus;
  if (status === null || status < 200 || status > 299) return { matches: false, reason: `the final URL answers ${status ?? "nothing"}, not a 2xx` };
  return { matches: true };
}
