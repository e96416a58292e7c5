/**
 * Finds a page's `<meta http-equiv="refresh" content="...">` the way HTML's
 * tokenizer reads markup (WHATWG HTML 13.2.5), in one forward pass over a body
 * the target wrote: comments, doctypes and other bogus comments, start and end
 * tags with their attributes (quoted values may hold `>`), and the raw text of
 * elements whose content is never markup (script, style, title...). The
 * position only moves forward and each character is looked at a bounded
 * number of times, so the cost is linear in the text whatever it holds (the
 * regular expressions this replaces rescanned to the end of the text for every
 * unterminated `<meta`: quadratic, docs/benchmarks.md has what that cost).
 *
 * Simplifications, none of which can make a scan cost more: a tag cut off by
 * the end of the text is dropped (as at the end of a document); script data's
 * escaped states (`<!--` inside a script) are not modelled; foreign content
 * and templates are read as HTML.
 */

/** What the scan reports of a meta element; null for any other tag. */
interface MetaAttributes {
  httpEquiv: string | null;
  content: string | null;
}

/** Elements whose content is text up to their own end tag (RCDATA, RAWTEXT, script data; noscript as with scripting on). */
const RAW_TEXT: ReadonlySet<string> = new Set(["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript"]);
/** Longest name the scan acts on ("plaintext", "http-equiv"): longer names are never lower-cased or copied. */
const LONGEST_NAME = 10;

const GT = 0x3e;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const EQUALS = 0x3d;
const DASH = 0x2d;
const DOUBLE_QUOTE = 0x22;
const SINGLE_QUOTE = 0x27;

/**
 * The content of the first meta element whose http-equiv is "refresh"
 * (ASCII case-insensitive) and whose content is not empty, outside comments
 * and raw text, with its character references decoded; or null. An empty
 * content is skipped, as HTML's refresh steps skip it.
 */
export function metaRefreshContent(html: string): string | null {
  const length = html.length;
  let at = 0;
  while (at < length) {
    const open = html.indexOf("<", at);
    if (open === -1) return null;
    at = open + 1;
    const next = html.charCodeAt(at);
    if (next === BANG) {
      at = markupDeclarationEnd(html, at + 1);
    } else if (next === QUESTION) {
      at = bogusCommentEnd(html, at + 1);
    } else if (next === SLASH) {
      at = endTagEnd(html, at + 1);
    } else if (isAsciiAlpha(next)) {
      const nameEnd = tagNameEnd(html, at);
      const name = lowerName(html, at, nameEnd);
      const meta: MetaAttributes | null = name === "meta" ? { httpEquiv: null, content: null } : null;
      at = attributesEnd(html, nameEnd, meta);
      if (at === -1) return null;
      if (meta !== null && meta.httpEquiv !== null && meta.content !== null && meta.content !== "" && isRefresh(meta.httpEquiv)) {
        return decodeEntities(meta.content);
      }
      if (name === "plaintext") return null;
      if (RAW_TEXT.has(name)) at = rawTextEnd(html, at, name);
    }
    // Anything else after '<' is text; the scan goes on from the next character.
    if (at === -1) return null;
  }
  return null;
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

/** After `</`: an end tag is read like a start tag (its attributes too) and ignored; `</>` is nothing; anything else a bogus comment. */
function endTagEnd(html: string, at: number): number {
  const next = html.charCodeAt(at);
  if (isAsciiAlpha(next)) return attributesEnd(html, tagNameEnd(html, at), null);
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
 * `>`, or -1 when the text ends first. Records http-equiv and content (the
 * first of each wins, as HTML drops repeats) when `meta` is given.
 */
function attributesEnd(html: string, at: number, meta: MetaAttributes | null): number {
  const length = html.length;
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
    while (index < length && isSpace(html.charCodeAt(index))) index++;
    if (index >= length) return -1;
    if (html.charCodeAt(index) !== EQUALS) {
      record(meta, html, nameStart, nameEnd, "");
      continue;
    }
    index++;
    while (index < length && isSpace(html.charCodeAt(index))) index++;
    if (index >= length) return -1;
    const first = html.charCodeAt(index);
    if (first === DOUBLE_QUOTE || first === SINGLE_QUOTE) {
      const close = html.indexOf(first === DOUBLE_QUOTE ? '"' : "'", index + 1);
      if (close === -1) return -1;
      record(meta, html, nameStart, nameEnd, meta === null ? "" : html.slice(index + 1, close));
      index = close + 1;
    } else if (first === GT) {
      record(meta, html, nameStart, nameEnd, "");
      return index + 1;
    } else {
      const valueStart = index;
      while (index < length && !isSpace(html.charCodeAt(index)) && html.charCodeAt(index) !== GT) index++;
      if (index >= length) return -1;
      record(meta, html, nameStart, nameEnd, meta === null ? "" : html.slice(valueStart, index));
    }
  }
}

function record(meta: MetaAttributes | null, html: string, start: number, end: number, value: string): void {
  // Only "content" (7) and "http-equiv" (10) are read.
  if (meta === null || (end - start !== 7 && end - start !== 10)) return;
  const name = lowerName(html, start, end);
  // HTML reads a NUL in a value as U+FFFD.
  const read = value.includes("\0") ? value.replaceAll("\0", "\uFFFD") : value;
  if (name === "http-equiv") meta.httpEquiv ??= read;
  else if (name === "content") meta.content ??= read;
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

/** A tag or attribute name lower-cased (ASCII only, as HTML does), or "" for one longer than any the scan acts on. */
function lowerName(html: string, start: number, end: number): string {
  return end - start > LONGEST_NAME ? "" : asciiLower(html.slice(start, end));
}

function isRefresh(httpEquiv: string): boolean {
  // Short of the references a value may use, "refresh" is 7 characters; a longer value is decoded first.
  return asciiLower(httpEquiv.length === 7 ? httpEquiv : httpEquiv.length <= 64 ? decodeEntities(httpEquiv) : "") === "refresh";
}

/** ASCII letters lower-cased, nothing else (HTML's rule for names and keywords), for the short strings the scan compares. */
function asciiLower(text: string): string {
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
 * The character references a URL in an attribute commonly carries. Linear:
 * the pattern can only start at a `&`, and what it may give back on failure
 * (a run of letters or at most 7 digits) ends before the next `&`.
 */
function decodeEntities(text: string): string {
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
function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d;
}
