import { MAX_URL_LENGTH } from "../limits.js";
import { refusal, type PolicyRefusal } from "../failures.js";

export type ParsedInput = { readonly ok: true; readonly url: URL } | { readonly ok: false; readonly refusal: PolicyRefusal };

export interface InputRules {
  /** redirect-check accepts `example.com/path` and starts it at https:// (spec §4.2). */
  readonly allowBareDomain: boolean;
}

const SCHEME_WITH_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\//i;
// `example.com:8443/x` also starts with letters and a colon; a scheme is only
// what is followed by something other than a port number.
const OTHER_SCHEME = /^[a-z][a-z0-9+.-]*:(?!\d+(?:[/?#]|$))/i;

/**
 * Turns the caller's string into an absolute http(s) URL, or a refusal naming
 * the rule. Only syntax is judged here; the prober's policy judges the target.
 */
export function parseTargetInput(raw: string, rules: InputRules): ParsedInput {
  const input = raw.trim();
  if (input === "") return refuse("INPUT_MISSING_URL");
  if (input.length > MAX_URL_LENGTH) {
    return refuse("INPUT_URL_TOO_LONG");
  }
  const hasScheme = SCHEME_WITH_AUTHORITY.test(input) || OTHER_SCHEME.test(input);
  if (!hasScheme && !rules.allowBareDomain) {
    return refuse("INPUT_NOT_ABSOLUTE");
  }
  const candidate = hasScheme ? input : `https://${input}`;
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return refuse("INPUT_INVALID_URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return refuse("INPUT_SCHEME", `Only http and https URLs can be checked, not ${url.protocol.replace(/:$/, "")}`);
  }
  if (url.hostname === "") return refuse("INPUT_NO_HOST");
  return { ok: true, url };
}

/** The refusal of the row `key` of the one table (src/failures.ts), worded with `reason` where the row needs specifics. */
function refuse(key: `INPUT_${string}`, reason?: string): ParsedInput {
  return { ok: false, refusal: refusal(key, reason) };
}
