/**
 * How a hop fails: the failure value the diagnostics decide from, the errors
 * the probe raises itself, and naming a failure from what was thrown and the
 * phase the hop had reached (its code and sentence are rows of src/shared/failures.ts).
 */
import { CAUSES, causeInfo, type FailureStage } from "../shared/failures.js";

/**
 * Why a hop produced no usable response. A value, never a string parsed later:
 * diagnostics decide from `stage`, `timedOut` and `cause`; people read `reason`.
 */
export interface ProbeFailure {
  readonly stage: FailureStage;
  /** True when the hop's own timeout or the caller's deadline ended it. */
  readonly timedOut: boolean;
  /** Machine-readable cause: ENOTFOUND, ECONNREFUSED, CERT_HAS_EXPIRED, RESPONSE_HEAD_TIMEOUT, ... */
  readonly cause: string;
  /** Short human sentence: "DNS lookup failed: no such host". */
  readonly reason: string;
  /** Milliseconds from the start of the hop until the failure was known. */
  readonly elapsedMs: number;
  /** The address dialled, when the hop got that far. */
  readonly remoteAddress: string | null;
}

/**
 * A failure the probe names itself while speaking HTTP (a head too large, a
 * malformed head, two Locations that disagree). Its `code` is a CAUSES key
 * (src/shared/failures.ts): the failure's stage and sentence come from that table, never from here.
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
  return (
    error instanceof TypeError ||
    error instanceof RangeError ||
    error instanceof ReferenceError ||
    error instanceof SyntaxError ||
    error instanceof EvalError ||
    error instanceof URIError
  );
}

/**
 * A socket or stream listener that never throws: a throw from an event
 * listener is an uncaught exception, which ends the probe thread (or the
 * process, with no probe threads), every check on it with it. What the
 * listener throws goes to `fail` instead, as an InternalProbeError, to end
 * its own hop; should `fail` throw too, the error goes no further.
 */
export function guarded<A = void, B = void, C = void>(
  listener: (first: A, second: B, third: C) => void,
  fail: (error: InternalProbeError) => void,
): (first: A, second: B, third: C) => void {
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

/** Every code CAUSES names, with or without a phase: what errorCodeOf looks for in a cause chain. */
const KNOWN_CODES: ReadonlySet<string> = new Set(
  Object.keys(CAUSES)
    .filter((key) => !key.startsWith("INPUT_"))
    .map((key) => key.slice(key.indexOf(":") + 1)),
);

/** What the hop's own deadline (or the caller's) reports, by the phase it cut short. */
export const TIMEOUT_CAUSE: Readonly<Record<FailureStage, string>> = {
  dns: "ETIMEOUT",
  connect: "CONNECT_TIMEOUT",
  tls: "ERR_TLS_HANDSHAKE_TIMEOUT",
  http: "RESPONSE_HEAD_TIMEOUT",
};

export interface FailureFacts {
  /** The phase the hop had reached when it failed. */
  readonly phase: FailureStage;
  /** The error code, read from the error and its `cause` chain. */
  readonly code: string;
  /** True when the hop's timer or the caller's signal ended it. */
  readonly aborted: boolean;
  readonly elapsedMs: number;
  readonly remoteAddress: string | null;
}

/**
 * Names a failure from its code and the phase reached. A code owned by a
 * stage (a certificate error, a DNS rcode) names that stage; a code that can
 * happen anywhere (a reset, an unknown code) takes the phase's.
 */
export function describeFailure(facts: FailureFacts): ProbeFailure {
  const base = { elapsedMs: facts.elapsedMs, remoteAddress: facts.remoteAddress };
  const cause = facts.aborted ? TIMEOUT_CAUSE[facts.phase] : facts.code;
  const info = causeInfo(cause, facts.phase);
  return Object.assign({}, base, { stage: info.stage, timedOut: facts.aborted || info.timedOut === true, cause, reason: info.reason });
}

/**
 * The most telling code in an error's `cause` chain: a wrapped socket or
 * parser error keeps its own below, so the deepest code that names something we know wins.
 */
export function errorCodeOf(error: unknown): string {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if ("code" in current && typeof current.code === "string") codes.push(current.code);
    // llhttp's errors as undici raises them often carry no code (its number is not mapped back to a name).
    // Told by name, not instanceof: the runtime never loads undici (a dev dependency), and must not for one check.
    else if ("name" in current && current.name === "HTTPParserError") codes.push("HTTP_PARSE_ERROR");
    current = "cause" in current ? current.cause : undefined;
  }
  const known = [...codes].reverse().find((code) => KNOWN_CODES.has(code) || code.startsWith("HPE_"));
  return known ?? codes[0] ?? "UNKNOWN";
}
