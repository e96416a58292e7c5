/**
 * Reads markup the way HTML's tokenizer does (WHATWG HTML 13.2.5), in one
 * forward pass over a body the target wrote, and tells a visitor what it
 * meets: start tags with the attributes it asked for, end tags, and text
 * (the raw text of elements whose content is never markup, such as title,
 * named as such). Comments, doctypes and other bogus comments are skipped.
 * The position only moves forward and each character is looked at a bounded
 * number of times, so the cost is linear in the text whatever it holds; a
 * visitor that does work bounded per call keeps it so.
 *
 * Simplifications, none of which can make a scan cost more: a tag cut off by
 * the end of the text is dropped (as at the end of a document) and ends the
 * scan; script data's escaped states (`<!--` inside a script) are not
 * modelled; foreign content and templates are read as HTML.
 */

export interface HtmlVisitor {
  /** The attribute names (lower case) to keep for a start tag of this name; null keeps none (and copies nothing). */
  attributesOf(tag: string): ReadonlySet<string> | null;
  /** A start tag with the attributes asked for (the first of each wins, a NUL read as U+FFFD, references not decoded); true ends the scan. */
  start(tag: string, attributes: ReadonlyMap<string, string>): boolean;
  /** An end tag; true ends the scan. */
  end?(tag: string): boolean;
  /** Text from `from` to `to` of the scanned string; `rawTextOf` names the raw-text element it is the content of, or is null. True ends the scan. */
  text?(html: string, from: number, to: number, rawTextOf: string | null): boolean;
}

/** Elements whose content is text up to their own end tag (RCDATA, RAWTEXT, script data; noscript as with scripting on). */
const RAW_TEXT: ReadonlySet<string> = new Set(["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript"]);
/** Longest tag or attribute name the scan names ("plaintext", "http-equiv"): longer names are never lower-cased or copied. */
const LONGEST_NAME = 10;
const NO_ATTRIBUTES: ReadonlyMap<string, string> = new Map();

const GT = 0x3e;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const EQUALS = 0x3d;
const DASH = 0x2d;
const DOUBLE_QUOTE = 0x22;
const SINGLE_QUOTE = 0x27;

/** Scans `html` to its end, or until the visitor asks to stop; `<plaintext>` ends it, as nothing after it is markup. */
export function scanHtml(html: string, visitor: HtmlVisitor): void {
  const length = html.length;
  let at = 0;
  while (at < length) {
    const open = html.indexOf("<", at);
    if (open === -1) {
      visitor.text?.(html, at, length, null);
      return;
    }
    if (open > at && visitor.text?.(html, at, open, null) === true) return;
    at = open + 1;
    const next = html.charCodeAt(at);
    if (next === BANG) {
      at = markupDeclarationEnd(html, at + 1);
    } else if (next === QUESTION) {
      at = bogusCommentEnd(html, at + 1);
    } else if (next === SLASH) {
      const nameAt = at + 1;
      at = endTagEnd(html, nameAt);
      if (at !== -1 && isAsciiAlpha(html.charCodeAt(nameAt)) && visitor.end?.(lowerName(html, nameAt, tagNameEnd(html, nameAt))) === true)
        return;
    } else if (isAsciiAlpha(next)) {
      const nameEnd = tagNameEnd(html, at);
      const name = lowerName(html, at, nameEnd);
      const wanted = visitor.attributesOf(name);
      const attributes = wanted === null ? null : new Map<string, string>();
      at = attributesEnd(html, nameEnd, wanted, attributes);
      if (at === -1) return;
      if (visitor.start(name, attributes ?? NO_ATTRIBUTES)) return;
      if (name === "plaintext") return;
      if (RAW_TEXT.has(name)) {
        const close = rawTextEnd(html, at, name);
        if (close === -1) return;
        if (visitor.text?.(html, at, close, name) === true) return;
        at = close;
      }
    }
    // Anything else after '<' is text; the scan goes on from the next character.
    if (at === -1) return;
  }
}

/** After `<!`: a comment ends at `-->` or `--!>` (or at once, `<!-->`, `<!--->`); anything else (a doctype, CDATA in HTML) at the next `>`. */
function markupDeclarationEnd(html: string, at: number): number {
  if (html.charCodeAt(at) !== DASH || html.charCodeAt(at + 1) !== DASH) return bogusCommentEnd(html, at);
  const body = at + 2;
  if (html.charCodeAt(body) === GT) return body + 1;
  if (html.charCodeAt(body) === DASH && html.charCodeAt(body + 1) === GT) return body + 2;
  // From each `--` on (the next search starts one further, so `--->` is found too).
  for (let dash = html.indexOf("--", body); dash !== -1; dash = html.indexOf("--", dash + 1)) {
    if (html.charCodeAt(dash + 2) === GT) return dash + 3;
    if (html.charCodeAt(dash + 2) === BANG && html.charCodeAt(dash + 3) === GT) return dash + 4;
  }
  // A comment the text never closes runs to its end.
  return -1;
}

function bogusCommentEnd(html: string, at: number): number {
  const close = html.indexOf(">", at);
  return close === -1 ? -1 : close + 1;
}

/** After `</`: an end tag is read like a start tag (its attributes too, none kept); `</>` is nothing; anything else a bogus comment. */
function endTagEnd(html: string, at: number): number {
  const next = html.charCodeAt(at);
  if (isAsciiAlpha(next)) return attributesEnd(html, tagNameEnd(html, at), null, null);
  if (next === GT) return at + 1;
  // `</` at the very end of the text is text.
  if (Number.isNaN(next)) return html.length;
  return bogusCommentEnd(html, at);
}

function tagNameEnd(html: string, at: number): number {
  let index = at;
  while (index < html.length) {
    const code = html.charCodeAt(index);
    if (isSpace(code) || code === SLASH || code === GT) break;
    index++;
  }
  return index;
}

/**
 * The attributes of a tag from `at` (just after its name) to just past its
 * `>`, or -1 when the text ends first. Keeps the `wanted` ones in `kept`
 * (the first of each wins, as HTML drops repeats).
 */
function attributesEnd(html: string, at: number, wanted: ReadonlySet<string> | null, kept: Map<string, string> | null): number {
  const length = html.length;
  const keeping = wanted !== null && kept !== null;
  let index = at;
  for (;;) {
    // Before an attribute name; also after a value, and after a `/` not followed by `>`.
    while (index < length && isSpace(html.charCodeAt(index))) index++;
    if (index >= length) return -1;
    const code = html.charCodeAt(index);
    if (code === GT) return index + 1;
    if (code === SLASH) {
      index++;
      if (html.charCodeAt(index) === GT) return index + 1;
      continue;
    }
    // The name's first character is taken whatever it is (even `=`); then up to space, `/`, `>` or `=`.
    const nameStart = index;
    index++;
    while (index < length) {
      const inName = html.charCodeAt(index);
      if (isSpace(inName) || inName === SLASH || inName === GT || inName === EQUALS) break;
      index++;
    }
    const nameEnd = index;
    // Only a name as long as one wanted is lower-cased and copied: an attribute flood costs a length compare each.
    const name = keeping && hasNameOfLength(wanted, nameEnd - nameStart) ? lowerName(html, nameStart, nameEnd) : "";
    const keep = keeping && name !== "" && wanted.has(name) && !kept.has(name);
    while (index < length && isSpace(html.charCodeAt(index))) index++;
    if (index >= length) return -1;
    if (html.charCodeAt(index) !== EQUALS) {
      if (keep) kept.set(name, "");
      continue;
    }
    index++;
    while (index < length && isSpace(html.charCodeAt(index))) index++;
    if (index >= length) return -1;
    const first = html.charCodeAt(index);
    if (first === DOUBLE_QUOTE || first === SINGLE_QUOTE) {
      const close = html.indexOf(first === DOUBLE_QUOTE ? '"' : "'", index + 1);
      if (close === -1) return -1;
      if (keep) kept.set(name, withoutNul(html.slice(index + 1, close)));
      index = close + 1;
    } else if (first === GT) {
      if (keep) kept.set(name, "");
      return index + 1;
    } else {
      const valueStart = index;
      while (index < length && !isSpace(html.charCodeAt(index)) && html.charCodeAt(index) !== GT) index++;
      if (index >= length) return -1;
      if (keep) kept.set(name, withoutNul(html.slice(valueStart, index)));
    }
  }
}

function hasNameOfLength(names: ReadonlySet<string>, length: number): boolean {
  for (const name of names) if (name.length === length) return true;
  return false;
}

/** HTML reads a NUL in a value as U+FFFD. */
function withoutNul(value: string): string {
  return value.includes("\0") ? value.replaceAll("\0", "\uFFFD") : value;
}

/** After the start tag of a raw-text element: text up to `</name` followed by space, `/` or `>` (any case), where the scan resumes. */
function rawTextEnd(html: string, at: number, name: string): number {
  for (let close = html.indexOf("</", at); close !== -1; close = html.indexOf("</", close + 2)) {
    const nameEnd = close + 2 + name.length;
    if (nameEnd > html.length || asciiLower(html.slice(close + 2, nameEnd)) !== name) continue;
    const after = html.charCodeAt(nameEnd);
    if (isSpace(after) || after === SLASH || after === GT) return close;
  }
  return -1;
}

/** A tag or attribute name lower-cased (ASCII only, as HTML does), or "" for one longer than any the scan names. */
function lowerName(html: string, start: number, end: number): string {
  return end - start > LONGEST_NAME ? "" : asciiLower(html.slice(start, end));
}

/** ASCII letters lower-cased, nothing else (HTML's rule for names and keywords), for the short strings the scan compares. */
export function asciiLower(text: string): string {
  let index = 0;
  while (index < text.length && !isAsciiUpper(text.charCodeAt(index))) index++;
  if (index === text.length) return text;
  let lower = text.slice(0, index);
  for (; index < text.length; index++) {
    const code = text.charCodeAt(index);
    lower += isAsciiUpper(code) ? String.fromCharCode(code + 0x20) : text[index];
  }
  return lower;
}

function isAsciiUpper(code: number): boolean {
  return code >= 0x41 && code <= 0x5a;
}

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", quot: '"', apos: "'", lt: "<", gt: ">" };

/**
 * The character references a URL or a keyword in an attribute commonly
 * carries. Linear: the pattern can only start at a `&`, and what it may give
 * back on failure (a run of letters or at most 7 digits) ends before the next `&`.
 */
export function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(/&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|([a-z]+));/gi, (whole, decimal?: string, hex?: string, name?: string) => {
    const point = decimal !== undefined ? Number.parseInt(decimal, 10) : hex !== undefined ? Number.parseInt(hex, 16) : null;
    if (point !== null) return point > 0 && point <= 0x10ffff ? String.fromCodePoint(point) : whole;
    return ENTITIES[asciiLower(name ?? "")] ?? whole;
  });
}

function isAsciiAlpha(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/** HTML's whitespace in tags: tab, LF, FF, CR and space. */
export function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d;
}
