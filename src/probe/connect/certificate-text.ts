/**
 * Total reads of a peer certificate's fields. The certificate is the
 * target's writing, and Node gives back what OpenSSL makes of it: a date
 * that is no time reads "Bad time value" (new Date(...).toISOString() then
 * throws), an empty subject reads undefined, a subjectAltName that does not
 * decode reads undefined or null, a name may hold control bytes and run to
 * tens of KiB. Each function here returns a value for every input, and never
 * more than CERTIFICATE_TEXT lets an answer copy.
 */
import type { X509Certificate } from "node:crypto";
import { CERTIFICATE_TEXT } from "../../shared/limits.js";

type TextField = "subject" | "issuer" | "subjectAltName" | "validFrom" | "validTo" | "serialNumber" | "fingerprint256" | "infoAccess";

/** A string field of the certificate as Node reads it; "" when Node has none (or its getter throws). */
export function certificateField(certificate: X509Certificate, field: TextField): string {
  try {
    const value: unknown = certificate[field];
    return typeof value === "string" ? value : "";
  } catch {
    return "";
  }
}

/**
 * ISO-8601 of one of Node's certificate dates ("Jan  1 00:00:00 2030 GMT");
 * "" when it is no date (Node's "Bad time value", month 13) or beyond what a
 * Date holds. The documented form of an unreadable date (docs/probe.md).
 */
export function isoDate(text: string): string {
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : "";
}

/**
 * Text to show of a name or number: control characters (C0, DEL, C1) and
 * bidirectional overrides replaced by U+FFFD, so a name cannot forge lines,
 * terminal escapes or reversed text wherever it is shown, and at most
 * CERTIFICATE_TEXT.maxChars characters, a cut one ending in "…".
 */
export function shownText(text: string): string {
  const cut = text.length > CERTIFICATE_TEXT.maxChars ? `${withoutBrokenPair(text.slice(0, CERTIFICATE_TEXT.maxChars - 1))}…` : text;
  return cut.replace(UNSHOWABLE, "\ufffd");
}

// One character class, no alternation or repetition: linear in the text, whatever it holds.
// The CLI escapes the same set (src/cli/report/terminal-safe.ts): one definition of what must not be shown raw.
// eslint-disable-next-line no-control-regex
export const UNSHOWABLE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A cut that ends between the halves of a surrogate pair drops the lone half. */
function withoutBrokenPair(text: string): string {
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, -1) : text;
}

/**
 * Node's subjectAltName ("DNS:a, IP Address:b") as entries, the first
 * CERTIFICATE_TEXT.maxAltNames of them. Read by index, so a list of
 * thousands costs no more than the entries kept. A name cannot hold ", "
 * unquoted; quoted ones are rare enough to keep whole.
 */
export function altNameEntries(text: string, max: number = CERTIFICATE_TEXT.maxAltNames): string[] {
  const names: string[] = [];
  let from = 0;
  while (from < text.length && names.length < max) {
    const comma = text.indexOf(", ", from);
    const end = comma === -1 ? text.length : comma;
    if (end > from) names.push(shownText(text.slice(from, end)));
    from = end + 2;
  }
  return names;
}

/** How many entries altNameEntries would find with no cap: one pass of indexOf, no strings made. */
export function altNameCount(text: string): number {
  let count = 0;
  let from = 0;
  while (from < text.length) {
    const comma = text.indexOf(", ", from);
    const end = comma === -1 ? text.length : comma;
    if (end > from) count++;
    from = end + 2;
  }
  return count;
}

/** The values of the named attributes, in the order asked, from Node's "KEY=value" lines; "" when there are none. */
export function nameParts(distinguishedName: string, keys: readonly string[]): string {
  const lines = distinguishedName.split("\n");
  const parts: string[] = [];
  for (const key of keys) for (const line of lines) if (line.startsWith(`${key}=`)) parts.push(line.slice(key.length + 1));
  return shownText(parts.join(", "));
}

/** Node's multi-line distinguished name on one line ("O=..., CN=..."). */
export function nameLine(distinguishedName: string): string {
  return shownText(distinguishedName.split("\n").join(", "));
}
