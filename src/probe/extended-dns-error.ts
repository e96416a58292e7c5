/**
 * Extended DNS Errors (RFC 8914): the EDNS0 option (code 15) a resolver adds
 * to say why it answered as it did (SERVFAIL because the answer is DNSSEC
 * bogus, NXDOMAIN because a policy blocked the name ...). The option's bytes
 * are a DNS server's: read by a total function, bounded in count and text.
 */
import { shownText } from "./connect/certificate-text.js";

/** The EDNS0 option code of an Extended DNS Error. */
export const EDE_OPTION_CODE = 15;
/** Errors kept of one answer: RFC 8914 allows several; real resolvers send one or two. */
export const MAX_EXTENDED_ERRORS = 4;
/** Characters kept of an extra-text: enough for a resolver's sentence, never a page of it. */
export const MAX_EXTRA_TEXT_CHARS = 160;

export interface ExtendedDnsError {
  /** The INFO-CODE, 0 to 65535. */
  readonly infoCode: number;
  /** The code's name in IANA's registry ("DNSSEC Bogus"); "" for a code it does not name. */
  readonly name: string;
  /** The EXTRA-TEXT, UTF-8 read leniently, control characters and bidi overrides as U+FFFD, at most MAX_EXTRA_TEXT_CHARS characters; "" when none. */
  readonly extraText: string;
}

/** IANA's "Extended DNS Error Codes" registry, 0 to 30. */
const NAMES: readonly string[] = [
  "Other Error",
  "Unsupported DNSKEY Algorithm",
  "Unsupported DS Digest Type",
  "Stale Answer",
  "Forged Answer",
  "DNSSEC Indeterminate",
  "DNSSEC Bogus",
  "Signature Expired",
  "Signature Not Yet Valid",
  "DNSKEY Missing",
  "RRSIGs Missing",
  "No Zone Key Bit Set",
  "NSEC Missing",
  "Cached Error",
  "Not Ready",
  "Blocked",
  "Censored",
  "Filtered",
  "Prohibited",
  "Stale NXDomain Answer",
  "Not Authoritative",
  "Not Supported",
  "No Reachable Authority",
  "Network Error",
  "Invalid Data",
  "Signature Expired before Valid",
  "Too Early",
  "Unsupported NSEC3 Iterations Value",
  "Unable to conform to policy",
  "Synthesized",
  "Invalid Query Type",
];

/** The option's data as RFC 8914 §2 lays it out: a 16-bit INFO-CODE, then EXTRA-TEXT. Null for data too short to hold a code. */
export function parseExtendedDnsError(data: Uint8Array): ExtendedDnsError | null {
  if (data.length < 2) return null;
  const infoCode = ((data[0] ?? 0) << 8) | (data[1] ?? 0);
  // Only the bytes that can make the characters kept are decoded: 4 bytes per character at most.
  const text = Buffer.from(data.buffer, data.byteOffset + 2, Math.min(data.length - 2, MAX_EXTRA_TEXT_CHARS * 4)).toString("utf8");
  return { infoCode, name: NAMES[infoCode] ?? "", extraText: cappedText(text) };
}

function cappedText(text: string): string {
  // Some resolvers end the text with a NUL, C-style: that one is no character of it.
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0) end -= 1;
  const shown = shownText(text.slice(0, end));
  if (shown.length <= MAX_EXTRA_TEXT_CHARS) return shown;
  const cut = shown.slice(0, MAX_EXTRA_TEXT_CHARS - 1);
  // A cut between the halves of a surrogate pair drops the lone half.
  const last = cut.charCodeAt(cut.length - 1);
  return `${last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut}…`;
}

/** DNSSEC validation failed: the answer exists and is signed, but its signatures do not hold. */
const BOGUS: ReadonlySet<number> = new Set([5, 6, 9, 10, 11, 12]);
/** A signature outside its validity window: the usual way a zone's DNSSEC breaks (a re-signing job stopped). */
const SIGNATURE_TIME: ReadonlySet<number> = new Set([7, 8, 25]);
/** The resolver's own policy kept the answer back: the name works elsewhere. */
const BLOCKED: ReadonlySet<number> = new Set([15, 16, 17, 18]);
/** The resolver could not reach the name's servers: not the name's answer at all. */
const NO_AUTHORITY: ReadonlySet<number> = new Set([22, 23]);

/** Whether these errors say DNSSEC validation failed (details.resolutions[].dnssec "bogus"). */
export function saysBogus(errors: readonly ExtendedDnsError[]): boolean {
  return errors.some(({ infoCode }) => BOGUS.has(infoCode) || SIGNATURE_TIME.has(infoCode));
}

/**
 * The failure table's key (src/shared/failures.ts) for a lookup a server failed with
 * these errors: the first error a row names decides; null when none does (the
 * lookup keeps its own code, the errors only added to its reason).
 */
export function extendedErrorCause(errors: readonly ExtendedDnsError[]): string | null {
  for (const { infoCode } of errors) {
    if (BOGUS.has(infoCode)) return "EDE_DNSSEC_BOGUS";
    if (SIGNATURE_TIME.has(infoCode)) return "EDE_DNSSEC_SIGNATURE_TIME";
    if (BLOCKED.has(infoCode)) return "EDE_BLOCKED";
    if (NO_AUTHORITY.has(infoCode)) return "EDE_NO_REACHABLE_AUTHORITY";
  }
  return null;
}

/** The errors as a reason's suffix: ` (Extended DNS Error 6 DNSSEC Bogus: "text")`, each; "" for none. */
export function extendedErrorsText(errors: readonly ExtendedDnsError[]): string {
  return errors
    .map(
      ({ infoCode, name, extraText }) =>
        ` (Extended DNS Error ${infoCode}${name === "" ? "" : ` ${name}`}${extraText === "" ? "" : `: "${extraText}"`})`,
    )
    .join("");
}
