/**
 * A linear walk over the headers of BER-encoded bytes (tag, length; the
 * contents stepped over, never decoded) that counts the elements a BER
 * parser would make of them and how deep they nest, and stops at the first
 * limit. asn1js builds its whole tree before any shape is checked, at some
 * microseconds an element: 16 KiB of tiny elements held a probe thread for
 * 84-134 ms (issue 36). This walk costs tens of nanoseconds an element, so
 * bytes are handed to the parser only when the tree it would build is small.
 *
 * It counts as asn1js works: a primitive OCTET STRING's or BIT STRING's
 * contents are tried as BER too (asn1js looks for an embedded structure in
 * every one), and their elements count whether or not the try succeeds.
 * Total: a value for any bytes, never a throw; recursion goes no deeper
 * than `maxDepth`.
 */

export interface BerLimits {
  /** Elements at most, embedded ones included. */
  readonly maxElements: number;
  /** Nesting at most (the outermost element is depth 1); never more than MAX_BER_DEPTH, whatever is asked. */
  readonly maxDepth: number;
}

/** The walk recurses once a level: its own ceiling on depth, far under any stack's. */
export const MAX_BER_DEPTH = 256;

export type BerShape =
  /** One element from the first byte, within the limits: `elements` counted, `depth` reached. */
  | { readonly kind: "fits"; readonly elements: number; readonly depth: number }
  /** More elements or deeper nesting than the limits: the walk stopped there. */
  | { readonly kind: "too-large" }
  /** No well-formed element at the first byte (a header that does not parse, a length past the end). */
  | { readonly kind: "malformed" };

interface Walk {
  readonly bytes: Uint8Array;
  readonly limits: BerLimits;
  elements: number;
  depth: number;
  over: boolean;
}

/** The shape of the one element that starts at the first byte (bytes after it are not looked at, as a parser reading one value ignores them). */
export function berShape(bytes: Uint8Array, limits: BerLimits): BerShape {
  const walk: Walk = {
    bytes,
    limits: { maxElements: limits.maxElements, maxDepth: Math.min(limits.maxDepth, MAX_BER_DEPTH) },
    elements: 0,
    depth: 0,
    over: false,
  };
  const end = element(walk, 0, bytes.length, 1);
  if (walk.over) return { kind: "too-large" };
  return end < 0 ? { kind: "malformed" } : { kind: "fits", elements: walk.elements, depth: walk.depth };
}

/** The offset after the element at `at` (which must end by `end`), or -1. */
function element(walk: Walk, at: number, end: number, depth: number): number {
  if (++walk.elements > walk.limits.maxElements || depth > walk.limits.maxDepth) {
    walk.over = true;
    return -1;
  }
  walk.depth = Math.max(walk.depth, depth);
  const { bytes } = walk;
  const identifier = bytes[at];
  if (identifier === undefined) return -1;
  let cursor = at + 1;
  // High tag numbers: base-128 bytes, the last without its top bit.
  if ((identifier & 0x1f) === 0x1f) {
    for (let count = 0; ; count++) {
      const next = bytes[cursor++];
      if (next === undefined || count >= 8) return -1;
      if ((next & 0x80) === 0) break;
    }
  }
  const first = bytes[cursor++];
  if (first === undefined || first === 0xff) return -1;
  const constructed = (identifier & 0x20) !== 0;
  if (first === 0x80) {
    // Indefinite length: constructed only, its elements end with an end-of-contents (00 00).
    return constructed ? elements(walk, cursor, end, depth + 1, true) : -1;
  }
  let length = first;
  if (first > 0x80) {
    const count = first & 0x7f;
    if (count > 8) return -1;
    length = 0;
    for (let index = 0; index < count; index++) {
      const next = bytes[cursor++];
      if (next === undefined) return -1;
      length = length * 256 + next;
    }
  }
  const contentEnd = cursor + length;
  if (contentEnd > end) return -1;
  if (constructed) return elements(walk, cursor, contentEnd, depth + 1, false) < 0 ? -1 : contentEnd;
  // Universal OCTET STRING (4), or BIT STRING (3) with no unused bits: asn1js tries the contents as BER.
  const universal = (identifier & 0xc0) === 0;
  const tag = identifier & 0x1f;
  const embeddedFrom = universal && tag === 4 ? cursor : universal && tag === 3 && bytes[cursor] === 0 ? cursor + 1 : -1;
  if (embeddedFrom >= 0 && embeddedFrom < contentEnd) {
    // Whether the try succeeds does not matter here: its work is counted either way.
    elements(walk, embeddedFrom, contentEnd, depth + 1, false);
    if (walk.over) return -1;
  }
  return contentEnd;
}

/** Elements from `at` up to `end`, or up to an end-of-contents with `untilEnd`: the offset after them, or -1. */
function elements(walk: Walk, at: number, end: number, depth: number, untilEnd: boolean): number {
  let cursor = at;
  while (cursor < end) {
    if (untilEnd && walk.bytes[cursor] === 0 && walk.bytes[cursor + 1] === 0) return cursor + 2;
    cursor = element(walk, cursor, end, depth);
    if (cursor < 0) return -1;
  }
  return untilEnd ? -1 : cursor;
}
