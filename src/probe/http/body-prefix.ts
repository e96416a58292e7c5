/**
 * The first bytes of an HTTP/1.x response body, decoded from its framing
 * (RFC 9112 §6.3): Transfer-Encoding ending in chunked is de-chunked, other
 * transfer codings and no length at all run to the close, Content-Length
 * stops at its length. Bounded by `limit` bytes of body and, for chunked,
 * by the size of a chunk-size line; what is not needed is never kept.
 */

/** A chunk-size line (size, extensions) longer than this is not one a server means. */
const MAX_CHUNK_LINE_BYTES = 4_096;

export type Framing =
  | { readonly kind: "length"; readonly length: number }
  | { readonly kind: "chunked" }
  | { readonly kind: "close" }
  | { readonly kind: "invalid" };

/**
 * The framing the fields announce; "invalid" when Content-Length cannot be
 * trusted. Read in one pass without building the lists: a value is the
 * target's (a Transfer-Encoding of 200,000 commas once went to
 * push(...list), past the engine's argument limit: a RangeError).
 */
export function bodyFraming(fields: readonly (readonly [string, string])[]): Framing {
  // Only the last transfer coding decides; every Content-Length item must be the first one.
  let lastCoding: string | null = null;
  let firstLength: string | null = null;
  let lengthsAgree = true;
  for (const [name, value] of fields) {
    if (name === "transfer-encoding")
      lastCoding = value
        .slice(value.lastIndexOf(",") + 1)
        .trim()
        .toLowerCase();
    else if (name === "content-length") {
      for (let from = 0; from <= value.length; ) {
        const comma = value.indexOf(",", from);
        const end = comma === -1 ? value.length : comma;
        const item = value.slice(from, end).trim();
        if (firstLength === null) firstLength = item;
        else if (item !== firstLength) lengthsAgree = false;
        from = end + 1;
      }
    }
  }
  // RFC 9112 §6.3: Transfer-Encoding overrides Content-Length.
  if (lastCoding !== null) return lastCoding === "chunked" ? { kind: "chunked" } : { kind: "close" };
  if (firstLength === null) return { kind: "close" };
  if (!/^\d{1,15}$/.test(firstLength) || !lengthsAgree) return { kind: "invalid" };
  return { kind: "length", length: Number(firstLength) };
}

export interface BodyPrefixReader {
  /** Takes body bytes as they arrive; true once nothing more is wanted. */
  push(bytes: Uint8Array): boolean;
  /** The prefix so far; null when the framing was broken. */
  result(): Uint8Array | null;
}

export function bodyPrefixReader(framing: Framing, limit: number): BodyPrefixReader {
  const parts: Uint8Array[] = [];
  let kept = 0;
  let broken = framing.kind === "invalid";
  let finished = broken || limit <= 0 || (framing.kind === "length" && framing.length === 0);
  const keep = (bytes: Uint8Array): void => {
    const take = Math.min(bytes.length, limit - kept);
    if (take > 0) {
      // A copy: the socket's chunk may be a slice of a larger buffer kept alive otherwise.
      parts.push(Uint8Array.prototype.slice.call(bytes, 0, take));
      kept += take;
    }
    if (kept >= limit) finished = true;
  };

  let remainingLength = framing.kind === "length" ? framing.length : 0;
  const chunked = framing.kind === "chunked" ? chunkDecoder() : null;

  return {
    push(bytes) {
      if (finished) return true;
      if (framing.kind === "length") {
        const body = bytes.subarray(0, remainingLength);
        remainingLength -= body.length;
        keep(body);
        if (remainingLength === 0) finished = true;
      } else if (chunked !== null) {
        const decoded = chunked.push(bytes);
        if (decoded === null) {
          broken = true;
          finished = true;
        } else {
          for (const piece of decoded.data) if (!finished) keep(piece);
          if (decoded.done) finished = true;
        }
      } else {
        keep(bytes);
      }
      return finished;
    },
    result() {
      if (broken) return null;
      return joinBytes(parts, kept);
    },
  };
}

export interface ChunkStep {
  readonly data: readonly Uint8Array[];
  /** The last chunk's size line was read: there is no more data (trailers may follow). */
  readonly done: boolean;
  /** Where in these bytes the message ended (after the trailers' empty line); null while it goes on. */
  readonly end: number | null;
}

/** A trailer section longer than this is not one a server means (Chromium allows about as much for a head). */
const MAX_TRAILER_BYTES = 16 * 1024;

/**
 * RFC 9112 §7.1, reading only as far as data goes, then the trailer section
 * to its empty line (bare LF accepted there too); null on anything malformed.
 */
export function chunkDecoder(): { push(bytes: Uint8Array): ChunkStep | null } {
  let state: "size" | "data" | "data-end" | "trailer" = "size";
  let line = "";
  let remaining = 0;
  let afterData = "";
  let trailerBytes = 0;
  let lastChunk = false;
  return {
    push(bytes) {
      const data: Uint8Array[] = [];
      let i = 0;
      while (i < bytes.length) {
        if (state === "data") {
          const piece = bytes.subarray(i, i + remaining);
          data.push(piece);
          remaining -= piece.length;
          i += piece.length;
          if (remaining === 0) state = "data-end";
          continue;
        }
        const byte = bytes[i++] as number;
        if (state === "data-end") {
          // CRLF (or a bare LF) after each chunk's data.
          afterData += String.fromCharCode(byte);
          if (afterData === "\n" || afterData === "\r\n") {
            afterData = "";
            state = "size";
          } else if (afterData !== "\r") return null;
          continue;
        }
        if (state === "trailer") {
          if (++trailerBytes > MAX_TRAILER_BYTES) return null;
          if (byte !== 0x0a) {
            line += String.fromCharCode(byte);
            continue;
          }
          if (line === "" || line === "\r") return { data, done: true, end: i };
          line = "";
          continue;
        }
        if (byte !== 0x0a) {
          line += String.fromCharCode(byte);
          if (line.length > MAX_CHUNK_LINE_BYTES) return null;
          continue;
        }
        const size = /^([0-9a-fA-F]{1,12})[ \t]*(?:;[^\r]*)?\r?$/.exec(line);
        if (size === null) return null;
        line = "";
        remaining = Number.parseInt(size[1] as string, 16);
        if (remaining === 0) {
          lastChunk = true;
          state = "trailer";
          continue;
        }
        state = "data";
      }
      return { data, done: lastChunk, end: null };
    },
  };
}

/**
 * The parts as one array with a buffer of its own: the prefix crosses to the
 * main thread by structured clone, which copies a view's whole buffer (a
 * pooled Buffer's 8 KiB, not its few bytes).
 */
export function joinBytes(parts: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
