/**
 * A failure the probe names itself while speaking HTTP (a head too large, a
 * malformed head, two Locations that disagree). Its `code` is a CAUSES key:
 * the failure's stage and sentence come from that table, never from here.
 */
export class ProbeProtocolError extends Error {
  constructor(
    readonly code: string,
    /** What exactly was wrong, for logs and tests; people read the CAUSES sentence. */
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
    this.name = "ProbeProtocolError";
  }
}

/**
 * A defect of ours met inside a hop (a throw where none was expected: in a
 * socket listener, reading what the target sent, after the answer). Its
 * code names the CAUSES row internal_probe_error; `cause` is what was thrown,
 * for the one log line the hop writes about it (hop.ts).
 */
export class InternalProbeError extends Error {
  readonly code = "INTERNAL_PROBE_ERROR";
  constructor(cause: unknown) {
    super(`an unexpected error inside the hop: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "InternalProbeError";
  }
}

/**
 * Whether a thrown value is a defect rather than something the network or a
 * peer did: an InternalProbeError, or one of JavaScript's own errors
 * (TypeError, RangeError, ...; Node's argument checks throw these too), or
 * anything thrown that is neither an Error nor a { code } value. Sockets, OpenSSL, c-ares and this
 * layer's own failures throw plain Errors with a code, never these.
 */
export function isDefect(error: unknown): boolean {
  if (error instanceof InternalProbeError) return true;
  // A failure the hop names itself as a plain { code } value (a DNS answer, a conflicting Location) is not thrown.
  if (!(error instanceof Error)) return !(typeof error === "object" && error !== null && "code" in error && typeof error.code === "string");
  return error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError || error instanceof SyntaxError || error instanceof EvalError || error instanceof URIError;
}

/**
 * A socket or stream listener that never throws: a throw from an event
 * listener is an uncaught exception, which ends the probe thread (or the
 * process, with no probe threads), every check on it with it. What the
 * listener throws goes to `fail` instead, as an InternalProbeError, to end
 * its own hop; should `fail` throw too, the error goes no further.
 */
export function guarded<A = void, B = void, C = void>(listener: (first: A, second: B, third: C) => void, fail: (error: InternalProbeError) => void): (first: A, second: B, third: C) => void {
  // Three arguments passed on, no rest array: the most a listener here reads (HTTP/2 'response': headers, flags, raw headers).
  return (first, second, third) => {
    try {
      listener(first, second, third);
    } catch (error) {
      try {
        fail(new InternalProbeError(error));
      } catch {
        // Nothing left to tell: the hop's own deadline still ends it.
      }
    }
  };
}
