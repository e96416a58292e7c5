import { chunkDecoder, type Framing } from "./body-prefix.js";

/** Most bytes of a redirect's body (framing included) read through to keep its connection; a longer one closes it, as before. */
export const MAX_DRAIN_BYTES = 64 * 1024;

export type DrainState = "more" | "done" | "broken";

/**
 * Reads a response body through to its end without keeping it, so that the
 * connection can carry the next request: every byte is accounted to the
 * framing, and a byte past the end (a server out of step with its own
 * framing) breaks it, since the next answer could not be trusted then.
 */
export interface BodyDrain {
  push(bytes: Uint8Array): DrainState;
  state(): DrainState;
}

/** A drain for a body of this framing; null when it cannot be read to a known end within MAX_DRAIN_BYTES. */
export function bodyDrain(framing: Framing, limit: number = MAX_DRAIN_BYTES): BodyDrain | null {
  if (framing.kind === "length") return framing.length > limit ? null : lengthDrain(framing.length);
  if (framing.kind === "chunked") return chunkedDrain(limit);
  return null;
}

function lengthDrain(length: number): BodyDrain {
  let left = length;
  let state: DrainState = left === 0 ? "done" : "more";
  return {
    push(bytes) {
      if (state === "broken" || bytes.length === 0) return state;
      if (state === "done" || bytes.length > left) return (state = "broken");
      left -= bytes.length;
      if (left === 0) state = "done";
      return state;
    },
    state: () => state,
  };
}

function chunkedDrain(limit: number): BodyDrain {
  const decoder = chunkDecoder();
  let read = 0;
  let state: DrainState = "more";
  return {
    push(bytes) {
      if (state === "broken" || bytes.length === 0) return state;
      read += bytes.length;
      if (state === "done" || read > limit) return (state = "broken");
      const step = decoder.push(bytes);
      if (step === null || (step.end !== null && step.end < bytes.length)) return (state = "broken");
      if (step.end !== null) state = "done";
      return state;
    },
    state: () => state,
  };
}
