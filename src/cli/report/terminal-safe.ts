// What the CLI prints of a target: every string a site chose (a header's
// name and value, a status text, a Location, a reason quoting either, a
// vantage's row) reaches a terminal, and a terminal obeys what it reads. A
// header value's obs-text bytes 0x9B, 0x9D and 0x9C are decoded (latin1) to
// U+009B CSI, U+009D OSC and U+009C ST: raw, they clear the screen, recolour
// or hide lines of the report and retitle the window. This file is the one
// place that decides what is safe to write; every report goes through it.

import { UNSHOWABLE } from "../../probe/connect/certificate-text.js";

// What a terminal must not get raw is what the probe keeps out of certificate and
// DNS names for every door (there replaced by U+FFFD): the controls a terminal acts
// on (C0, DEL, C1) and the bidirectional controls that reorder what is shown (LRM/RLM,
// the embeddings and overrides, the isolates). One definition of that set, there.

// In --json, JSON.stringify already escapes C0; the rest of the set above, and the
// line and paragraph separators (U+2028/2029) that older JavaScript parsers and
// some viewers take for line ends, are escaped too. Escaped or not, each is the
// same JSON string value.
const JSON_UNSAFE = /[\u007f-\u009f\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]/g;

/**
 * `text` safe to write to a terminal: each control character shown as its
 * escape, `\x9b` for one of the first 256 code points and `\u202e` above, so
 * a reader sees what the target sent and the terminal acts on none of it.
 */
export function terminalText(text: string): string {
  return text.replace(UNSHOWABLE, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * A copy of a result (plain data: objects, arrays, strings, numbers) with
 * every string, keys included, made safe by terminalText. A report renders
 * from this copy, so no string of the target reaches the terminal whatever
 * field it is shown from. Anything that is not plain data is kept as is.
 */
export function terminalSafe<T>(value: T): T {
  return safeCopy(value) as T;
}

function safeCopy(value: unknown): unknown {
  if (typeof value === "string") return terminalText(value);
  if (Array.isArray(value)) return value.map(safeCopy);
  if (typeof value !== "object" || value === null) return value;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  // fromEntries defines each key as an own property: a target's "__proto__" stays a field.
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [terminalText(key), safeCopy(item)]));
}

/** JSON.stringify(value), with the characters JSON_UNSAFE names escaped as \uXXXX: only ever inside strings. */
export function jsonText(value: unknown): string {
  const json = JSON.stringify(value) ?? "null";
  return json.replace(JSON_UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
