import { headerValue, type HeaderMap } from "../probe/http/header-map.js";

/**
 * Strict-Transport-Security (RFC 6797) and Alt-Svc (RFC 7838) read from an
 * HTTPS answer. Both values are the target's bytes: the readers below are
 * total (any string gives a value, nothing throws), scan each character at
 * most once (no regular expression that could backtrack) and give bounded
 * results (numbers clamped, booleans), so a hostile head costs a linear scan
 * of at most its own capped length and can only produce a small answer.
 */

/** The policy an HTTPS answer set. */
export interface HstsPolicy {
  /** Seconds, clamped to HSTS_MAX_AGE_CAP. 0 asks a browser to forget the policy. */
  readonly maxAge: number;
  readonly includeSubDomains: boolean;
  readonly preload: boolean;
}

/** What an HTTPS answer said about its transport, as the details show it. */
export interface TransportSecurity {
  /** The policy of the first Strict-Transport-Security field (RFC 6797 §8.1); null when none was sent or it was invalid. */
  readonly hsts: HstsPolicy | null;
  /** True when a Strict-Transport-Security field was sent but its directives are invalid: no policy, as in a browser. */
  readonly hstsInvalid: boolean;
  /** True when Alt-Svc advertises HTTP/3 ("h3"). Reported only: the probe does not speak QUIC. */
  readonly h3Advertised: boolean;
}

/**
 * delta-seconds past what an int32 holds is taken as 2^31 - 1, as RFC 9111 §1.2.2
 * allows caches ("the greatest positive integer it can conveniently represent"): a bounded number in the answer, never Infinity or a
 * string of a thousand digits.
 */
export const HSTS_MAX_AGE_CAP = 2_147_483_647;

/**
 * Characters of a header value read. A Strict-Transport-Security value
 * longer than this is invalid (a real one is a few dozen characters); of
 * Alt-Svc fields, only the first this many characters are looked through.
 */
const TRANSPORT_HEADER_SCAN_LIMIT = 8_192;

export type HstsReading =
  | { readonly kind: "missing" }
  | { readonly kind: "invalid" }
  | { readonly kind: "policy"; readonly policy: HstsPolicy };

/** The HSTS reading of a head: the first Strict-Transport-Security field counts, later ones are ignored (RFC 6797 §8.1). */
export function hstsOf(headers: HeaderMap): HstsReading {
  const value = headerValue(headers, "strict-transport-security");
  if (value === undefined) return { kind: "missing" };
  const first = typeof value === "string" ? value : value[0];
  if (first === undefined) return { kind: "missing" };
  const policy = parseHsts(first);
  return policy === null ? { kind: "invalid" } : { kind: "policy", policy };
}

/** The transport facts of an HTTPS answer's head (details only: the hot path reads just the final hop's STS). */
export function transportSecurityOf(headers: HeaderMap): TransportSecurity {
  const hsts = hstsOf(headers);
  return {
    hsts: hsts.kind === "policy" ? hsts.policy : null,
    hstsInvalid: hsts.kind === "invalid",
    h3Advertised: altSvcAdvertisesH3(headerValue(headers, "alt-svc")),
  };
}

/**
 * One Strict-Transport-Security value: directives separated by ";", each a
 * token name, optionally "=" a token or a quoted string, with optional
 * whitespace around. Names are case-insensitive; a directive named twice, a
 * missing or non-numeric max-age, a value on includeSubDomains or preload,
 * or any byte outside the grammar makes the whole value invalid (null), as
 * RFC 6797 §6.1 has browsers ignore it. Unknown directives are skipped.
 */
export function parseHsts(raw: string): HstsPolicy | null {
  if (raw.length > TRANSPORT_HEADER_SCAN_LIMIT) return null;
  const seen = new Set<string>();
  let maxAge: number | null = null;
  let includeSubDomains = false;
  let preload = false;
  let at = 0;
  const length = raw.length;
  for (;;) {
    at = skipSpace(raw, at);
    const nameStart = at;
    while (at < length && isTokenChar(raw.charCodeAt(at))) at++;
    const name = raw.slice(nameStart, at).toLowerCase();
    at = skipSpace(raw, at);
    let value: string | null = null;
    if (at < length && raw.charCodeAt(at) === EQUALS) {
      if (name === "") return null;
      const read = readValue(raw, skipSpace(raw, at + 1));
      if (read === null) return null;
      value = read.value;
      at = skipSpace(raw, read.end);
    }
    if (name !== "") {
      if (seen.has(name)) return null;
      seen.add(name);
      if (name === "max-age") {
        if (value === null) return null;
        maxAge = deltaSeconds(value);
        if (maxAge === null) return null;
      } else if (name === "includesubdomains" || name === "preload") {
        if (value !== null) return null;
        if (name === "preload") preload = true;
        else includeSubDomains = true;
      }
    }
    if (at >= length) break;
    // Anything but ";" after a directive is outside the grammar.
    if (raw.charCodeAt(at) !== SEMICOLON) return null;
    at++;
  }
  return maxAge === null ? null : { maxAge, includeSubDomains, preload };
}

/**
 * True when an Alt-Svc value (or several fields) lists an alternative whose
 * protocol id is "h3". Alternatives are split at commas outside quoted
 * strings; each one's id is what comes before its "=". "clear" lists none.
 */
export function altSvcAdvertisesH3(value: string | readonly string[] | undefined): boolean {
  if (value === undefined) return false;
  const fields = typeof value === "string" ? [value] : value;
  let budget = TRANSPORT_HEADER_SCAN_LIMIT;
  for (const field of fields) {
    if (budget <= 0) break;
    const text = field.length > budget ? field.slice(0, budget) : field;
    budget -= text.length;
    if (listsH3(text)) return true;
  }
  return false;
}

function listsH3(text: string): boolean {
  let quoted = false;
  let escaped = false;
  // At the start of an alternative: read its id up to "=".
  let atStart = true;
  let id = "";
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (quoted) {
      if (escaped) escaped = false;
      else if (code === BACKSLASH) escaped = true;
      else if (code === QUOTE) quoted = false;
      continue;
    }
    if (code === QUOTE) quoted = true;
    else if (code === COMMA) {
      atStart = true;
      id = "";
      continue;
    }
    if (!atStart) continue;
    if (code === EQUALS) {
      if (id === "h3") return true;
      atStart = false;
    } else if (code === SPACE || code === TAB) {
      if (id !== "") atStart = false;
    } else if (id.length < 16) id += text[at];
    else atStart = false;
  }
  return false;
}

/** A directive value: a token, or a quoted string with its escapes resolved; null when neither. */
function readValue(raw: string, at: number): { value: string; end: number } | null {
  if (at < raw.length && raw.charCodeAt(at) === QUOTE) {
    let value = "";
    for (let i = at + 1; i < raw.length; i++) {
      const code = raw.charCodeAt(i);
      if (code === QUOTE) return { value, end: i + 1 };
      if (code === BACKSLASH) {
        i++;
        if (i >= raw.length) return null;
      }
      value += raw[i];
    }
    return null;
  }
  const start = at;
  while (at < raw.length && isTokenChar(raw.charCodeAt(at))) at++;
  return at === start ? null : { value: raw.slice(start, at), end: at };
}

/** 1*DIGIT, clamped; null for anything else (a sign, a dot, an empty value). */
function deltaSeconds(value: string): number | null {
  if (value === "") return null;
  let seconds = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < ZERO || code > NINE) return null;
    seconds = Math.min(seconds * 10 + (code - ZERO), HSTS_MAX_AGE_CAP);
  }
  return seconds;
}

function skipSpace(raw: string, at: number): number {
  while (at < raw.length && (raw.charCodeAt(at) === SPACE || raw.charCodeAt(at) === TAB)) at++;
  return at;
}

/** RFC 9110 tchar: ALPHA, DIGIT and !#$%&'*+-.^_`|~ */
function isTokenChar(code: number): boolean {
  if ((code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) return true;
  return TOKEN_SYMBOLS.includes(String.fromCharCode(code)) && code < 0x80;
}

const TOKEN_SYMBOLS = "!#$%&'*+-.^_`|~";
const SPACE = 0x20;
const TAB = 0x09;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const EQUALS = 0x3d;
const SEMICOLON = 0x3b;
const ZERO = 0x30;
const NINE = 0x39;
