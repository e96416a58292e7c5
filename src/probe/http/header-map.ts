/**
 * Response headers by name, as the hop hands them out (HopResponse.headers).
 * The names are the target's choice: a field may be named `__proto__`,
 * `constructor` or `toString`. On an ordinary object (`{}`) those find
 * Object.prototype's members: collecting `__proto__` twice called `.push` on
 * Object.prototype, and a site that was up was reported as a failed request.
 * So a map is made without a prototype, and read by own property only:
 * a map that crossed a thread (structured clone) arrives as an ordinary
 * object, whose own properties are still the fields but whose `constructor`
 * is Object's unless the site sent one. The lint rules in eslint.config.js
 * hold both halves.
 */

/** Lower-cased names; a repeated field's values joined as an array, in order. */
export type HeaderMap = Readonly<Record<string, string | readonly string[]>>;

/** The map of a head's fields (name, value), without a prototype. */
export function headerMapOf(fields: readonly (readonly [string, string])[]): HeaderMap {
  const headers = Object.create(null) as Record<string, string | string[]>;
  /* eslint-disable no-restricted-syntax -- the map has no prototype: every name, __proto__ included, is its own field. */
  for (const [name, value] of fields) {
    const seen = headers[name];
    if (seen === undefined) headers[name] = value;
    else if (typeof seen === "string") headers[name] = [seen, value];
    else seen.push(value);
  }
  /* eslint-enable no-restricted-syntax */
  return headers;
}

/** A field's value(s), by own property only: a map from another thread is an ordinary object. */
export function headerValue(headers: HeaderMap, name: string): string | readonly string[] | undefined {
  // eslint-disable-next-line no-restricted-syntax -- read only after Object.hasOwn.
  return Object.hasOwn(headers, name) ? headers[name] : undefined;
}

/**
 * The text of a Location header as browsers read it. HTTP/1.1 header values
 * arrive as bytes, which the parser hands over one byte per character
 * (Latin-1); servers in the wild put raw UTF-8 there (`/café/`, `bücher.test`).
 * Chromium and curl read such bytes as UTF-8 when they form valid UTF-8, and
 * otherwise percent-encode each byte above 0x7F as it stands; so do we, and
 * the WHATWG URL parser then percent-encodes the path and turns a Unicode
 * host into its punycode form, as a browser would. Overlong forms and other
 * invalid sequences are not valid UTF-8, so they are never decoded into
 * characters they might smuggle (such as "/").
 */
export function locationText(headerValue: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\u0000-\u007f]*$/.test(headerValue)) return headerValue;
  // Characters above U+00FF cannot come from a Latin-1 reading of bytes: the value is text already.
  // eslint-disable-next-line no-control-regex
  if (/[^\u0000-\u00ff]/.test(headerValue)) return headerValue;
  const bytes = Buffer.from(headerValue, "latin1");
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    let out = "";
    for (const byte of bytes) out += byte < 0x80 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    return out;
  }
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });
