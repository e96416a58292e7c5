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
