/**
 * A strict, bounded reader for one HTTP/1.x response head (RFC 9112 §4, §5;
 * field syntax RFC 9110 §5). It sees bytes only, never a socket, so every
 * rule can be tested on exact bytes. Deliberate choices (docs/probe.md,
 * "Reading a response head"):
 *
 * - A line may end in CRLF or in a bare LF (RFC 9112 §2.2 lets a recipient
 *   accept LF alone; browsers and curl do). A CR anywhere else is refused.
 * - obs-fold (a field line starting with SP or HTAB) is joined to the previous
 *   field's value with one SP, as RFC 9112 §5.2 requires of a user agent.
 *   Whitespace before the first field line is refused (§2.2 allows either).
 * - Field names are tokens, with nothing between the name and the colon
 *   (§5.1); values are VCHAR, obs-text, SP and HTAB only (no NUL, CR, other
 *   controls, DEL).
 * - The version is HTTP/1.0 or HTTP/1.1; the status is exactly three digits,
 *   100 to 999; the reason phrase is any bytes but CR and LF (clients ignore
 *   it, RFC 9112 §4; llhttp takes control bytes there too).
 * - Empty lines before a status line are skipped (skipEmptyLines), as llhttp
 *   skips them.
 * - Framing fields (Content-Length, Transfer-Encoding) are judged only by the
 *   body reader, and only when a body is read.
 */

export interface ResponseHead {
  /** "2" for a head read by the HTTP/2 exchange. */
  readonly version: "1.0" | "1.1" | "2";
  readonly status: number;
  /** As sent; possibly empty. Bytes above 0x7F read one per character (Latin-1), as Node's parser does. */
  readonly statusText: string;
  /** Field lines in order: lower-cased name, value without surrounding whitespace (Latin-1). */
  readonly fields: readonly (readonly [string, string])[];
  /** Each field's name as the server spelled it, index for index with `fields`; only when the reader was asked to keep them (details). */
  readonly sentNames?: readonly string[];
}

export type HeadParse =
  | { readonly ok: true; readonly head: ResponseHead }
  | { readonly ok: false /** Which rule the head broke, for tests and logs (never shown as a reason). */; readonly rule: string };

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const HTAB = 0x09;

/**
 * Where the head that starts at `from` ends (the index just past its empty
 * line), or -1 when it has not ended within `buffer`. `scanFrom` lets a caller
 * resume where the last call stopped, so every byte is looked at once.
 */
export function findHeadEnd(buffer: Uint8Array, from: number, scanFrom: number): number {
  // The empty line is an LF directly after the head's start or after an
  // earlier LF, optionally with one CR between them.
  for (let i = Math.max(from, scanFrom); i < buffer.length; i++) {
    if (buffer[i] !== LF) continue;
    let lineStart = i;
    if (lineStart > from && buffer[lineStart - 1] === CR) lineStart--;
    if (lineStart === from || buffer[lineStart - 1] === LF) return i + 1;
  }
  return -1;
}

const STATUS_LINE_START = [0x48, 0x54, 0x54, 0x50, 0x2f]; // "HTTP/"

/**
 * What the bytes from `from` can be, from the first five at most: the start
 * of a status line ("HTTP/", any case, as Chromium looks for it), text with
 * no status line (a server answering as HTTP/0.9 did: the body alone, which
 * browsers refuse), another protocol's greeting or bytes that are not text
 * (a control byte), or undecided while fewer than five bytes are in and more
 * may come (`complete`: the connection ended, what is here is all there is).
 */
export function statusLineStart(
  buffer: Uint8Array,
  from: number,
  complete: boolean,
): "status_line" | "http09_text" | "not_http" | "undecided" {
  const available = Math.min(STATUS_LINE_START.length, buffer.length - from);
  let matches = true;
  for (let i = 0; i < available; i++) {
    const byte = buffer[from + i] ?? 0;
    if ((byte < 0x20 && byte !== HTAB && byte !== CR && byte !== LF) || byte === 0x7f) return "not_http";
    // ASCII letters fold to upper case by clearing 0x20; "/" is compared as it is.
    const folded = byte >= 0x61 && byte <= 0x7a ? byte - 0x20 : byte;
    if (folded !== STATUS_LINE_START[i]) matches = false;
  }
  if (matches) return "status_line";
  if (available < STATUS_LINE_START.length && !complete) return "undecided";
  return isGreeting(buffer.subarray(from, from + available)) ? "not_http" : "http09_text";
}

/** Greetings of the protocols a wrong port meets most (SSH, SMTP and FTP's "220 ", POP3, IMAP, VNC): another protocol, not HTTP/0.9. */
function isGreeting(start: Uint8Array): boolean {
  const text = String.fromCharCode(...start);
  return /^(SSH-|\+OK|-ERR|\* OK|RFB |\d{3}[ -])/.test(text);
}

/** The index of the first byte at or after `from` that is not CR or LF: where the next status line starts. */
export function skipEmptyLines(buffer: Uint8Array, from: number): number {
  let at = from;
  while (at < buffer.length && (buffer[at] === CR || buffer[at] === LF)) at++;
  return at;
}

/**
 * Parses a complete head (status line, field lines, empty line) as found by
 * findHeadEnd, of at most `maxFields` field lines (folded lines join the
 * field before them and do not count). It reads by index into the one buffer and makes a string only
 * of each name and value: a view per line, name and value were a large share
 * of the garbage a redirect trace made on its thread (docs/benchmarks.md).
 */
/** The rule a head with more than `maxFields` field lines breaks: the reader reports it as a head too large, not a malformed one. */
export const TOO_MANY_FIELDS = "more field lines than allowed";

export function parseResponseHead(bytes: Uint8Array, maxFields: number = Number.POSITIVE_INFINITY, keepSentNames = false): HeadParse {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (hasStrayCr(buffer)) return { ok: false, rule: "a CR not followed by LF" };
  const statusEnd = lineEnd(buffer, 0);
  if (statusEnd === -1) return { ok: false, rule: "no status line" };
  const status = parseStatusLine(buffer, 0, statusEnd);
  if (typeof status === "string") return { ok: false, rule: status };
  let next = afterLine(buffer, statusEnd);

  const fields: [string, string][] = [];
  const sentNames: string[] | null = keepSentNames ? [] : null;
  while (next < buffer.length) {
    const start = next;
    const end = lineEnd(buffer, start);
    if (end === -1 || end === start) break;
    next = afterLine(buffer, end);
    if (buffer[start] === SP || buffer[start] === HTAB) {
      const last = fields[fields.length - 1];
      if (last === undefined) return { ok: false, rule: "whitespace before the first field line" };
      const more = fieldValue(buffer, start, end);
      if (more === null) return { ok: false, rule: "an invalid byte in a folded value" };
      last[1] = last[1] === "" ? more : more === "" ? last[1] : `${last[1]} ${more}`;
      continue;
    }
    const field = parseFieldLine(buffer, start, end);
    if (typeof field === "string") return { ok: false, rule: field };
    sentNames?.push(field[0]);
    fields.push([field[0].toLowerCase(), field[1]]);
    if (fields.length > maxFields) return { ok: false, rule: TOO_MANY_FIELDS };
  }
  const head = { version: status.version, status: status.status, statusText: status.statusText, fields };
  return { ok: true, head: sentNames === null ? head : Object.assign(head, { sentNames }) };
}

/** A CR anywhere that is not followed by LF: the whole head is refused for it, before any other rule. */
function hasStrayCr(buffer: Buffer): boolean {
  for (let i = buffer.indexOf(CR); i !== -1; i = buffer.indexOf(CR, i + 1)) if (buffer[i + 1] !== LF) return true;
  return false;
}

/** Where the line that starts at `from` ends, without its CRLF or LF (no stray CR is left); -1 when no line ending follows. */
function lineEnd(buffer: Buffer, from: number): number {
  const lf = buffer.indexOf(LF, from);
  if (lf === -1) return -1;
  return lf > from && buffer[lf - 1] === CR ? lf - 1 : lf;
}

/** The index just past the line ending at `end` (its CRLF or LF). */
function afterLine(buffer: Buffer, end: number): number {
  return buffer[end] === CR ? end + 2 : end + 1;
}

function parseStatusLine(
  buffer: Buffer,
  start: number,
  end: number,
): { version: "1.0" | "1.1"; status: number; statusText: string } | string {
  // "HTTP/1.x SSS" is 12 bytes; a reason phrase, when present, follows one SP.
  const prefix = "HTTP/1.";
  const length = end - start;
  if (length < 12) return "a short status line";
  for (let i = 0; i < prefix.length; i++) if (buffer[start + i] !== prefix.charCodeAt(i)) return "not an HTTP/1 status line";
  if (buffer[start + 7] !== 0x30 && buffer[start + 7] !== 0x31) return "an unsupported HTTP version";
  if (buffer[start + 8] !== SP) return "no space after the version";
  let status = 0;
  for (let i = 9; i < 12; i++) {
    const digit = (buffer[start + i] as number) - 0x30;
    if (digit < 0 || digit > 9) return "a status code that is not three digits";
    status = status * 10 + digit;
  }
  if (status < 100) return "a status code below 100";
  const version = buffer[start + 7] === 0x31 ? "1.1" : "1.0";
  if (length === 12) return { version, status, statusText: "" };
  if (buffer[start + 12] !== SP) return "a status code that is not three digits";
  // Any byte but CR and LF (already gone): clients ignore the phrase (RFC 9112 §4), llhttp takes
  // control bytes there, and no site should be down for the words after its status code.
  return { version, status, statusText: buffer.toString("latin1", start + 13, end) };
}

function parseFieldLine(buffer: Buffer, start: number, end: number): [string, string] | string {
  let colon = start;
  while (colon < end && isTokenByte(buffer[colon] as number)) colon++;
  if (colon === end || buffer[colon] !== 0x3a)
    return colon === start || buffer[colon] === SP || buffer[colon] === HTAB ? "an invalid field name" : "an invalid byte in a field name";
  if (colon === start) return "an empty field name";
  const value = fieldValue(buffer, colon + 1, end);
  if (value === null) return "an invalid byte in a field value";
  // The name as sent; the caller lower-cases it (and keeps it as sent when asked).
  return [buffer.toString("latin1", start, colon), value];
}

/** The value between `from` and `to` with surrounding SP/HTAB removed; null when a byte is not allowed. */
function fieldValue(buffer: Buffer, from: number, to: number): string | null {
  let start = from;
  let end = to;
  while (start < end && (buffer[start] === SP || buffer[start] === HTAB)) start++;
  while (end > start && (buffer[end - 1] === SP || buffer[end - 1] === HTAB)) end--;
  for (let i = start; i < end; i++) if (!isTextByte(buffer[i] as number)) return null;
  return buffer.toString("latin1", start, end);
}

/** HTAB, SP, VCHAR, obs-text: what a field value or reason phrase may hold. */
function isTextByte(byte: number): boolean {
  return byte === HTAB || (byte >= SP && byte !== 0x7f);
}

/** RFC 9110 §5.6.2 tchar. */
const TOKEN = (() => {
  const table = new Uint8Array(256);
  for (const char of "!#$%&'*+-.^_`|~") table[char.charCodeAt(0)] = 1;
  for (let byte = 0x30; byte <= 0x39; byte++) table[byte] = 1;
  for (let byte = 0x41; byte <= 0x5a; byte++) table[byte] = 1;
  for (let byte = 0x61; byte <= 0x7a; byte++) table[byte] = 1;
  return table;
})();

function isTokenByte(byte: number): boolean {
  return TOKEN[byte] === 1;
}
