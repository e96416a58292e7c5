import type { BodyDrain } from "./body-drain.js";
import type { HopTrace } from "../hop-trace.js";
import type { ResponseHead } from "./response-head.js";
import type { AbortWatch } from "../clock.js";

/**
 * At most this many interim (1xx) responses before the final one. RFC 9110
 * §15.2 makes a client accept them unasked; servers send one (100 Continue,
 * 103 Early Hints) or two. Every head, interim ones included, also counts
 * against the response head limit.
 */
export const MAX_INTERIM_RESPONSES = 8;

/**
 * At most this many field lines in one response head, either protocol; more
 * is http_headers_too_large, as a head over the byte limit is. Browsers bound
 * a head by its bytes (Chromium 256 KiB, as our default) and keep every
 * field; within those bytes a head of 4-byte lines is 64K fields, each an
 * array and two strings here and an entry in the header map (about 10 MiB of
 * garbage per head). The largest real heads carry a few hundred fields; this
 * is the count the HTTP/2 session already allowed (maxHeaderListPairs).
 */
export const MAX_RESPONSE_HEADER_FIELDS = 8_192;

/** The most body a hop reads, whatever it is asked for: every input is bounded before it is used. */
export const MAX_BODY_PREFIX_BYTES = 1024 * 1024;

/** What one request over an established connection needs. */
export interface ExchangeRequest {
  readonly url: URL;
  readonly method: "GET" | "HEAD";
  /** Lower-case names; sent in this order after Host. */
  readonly headers: readonly (readonly [string, string])[];
  /** Largest response head, every interim head included. */
  readonly maxHeadBytes: number;
  /** Ask the server to keep the connection open (HTTP/1.1), as browsers do; false asks it to close. */
  readonly keepAlive: boolean;
  /** With keepAlive: the connection may be kept after a final answer too, not only after a redirect. */
  readonly keepAfterAnswer: boolean;
  /** Keep the field names as the server spelled them (ResponseHead.sentNames): details asked for the response headers. */
  readonly captureHead: boolean;
  /** Body bytes to read after the head; 0 reads none. */
  readonly bodyPrefixBytes: number;
  /** The hop's deadline: before the head it fails the hop, during the body it ends the prefix. */
  readonly signal: AbortWatch;
  readonly trace: HopTrace;
}

export interface Exchanged {
  readonly head: ResponseHead;
  readonly httpVersion: "1.0" | "1.1" | "2";
  /** When the final head was complete. */
  readonly headAt: number;
  /** Null when not asked for, or when the body's framing could not be trusted. */
  readonly bodyPrefix: Uint8Array | null;
  /**
   * When the connection could carry another request (HTTP/1.1, keep-alive, a
   * body with a known end, nothing beyond it so far): the drain that has
   * taken every body byte so far, to read the rest; the socket is left
   * paused. Null when it must be closed.
   */
  readonly drain: BodyDrain | null;
}

/** Statuses whose responses have no body (RFC 9110 §6.4.1), besides any answer to HEAD. */
export function hasNoBody(method: "GET" | "HEAD", status: number): boolean {
  return method === "HEAD" || status < 200 || status === 204 || status === 304;
}

/**
 * The statuses Fetch treats as redirects (WHATWG Fetch, "redirect status").
 * 300, 304, 305 and 306 are answers in their own right and end the chain.
 */
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export function isRedirectStatus(status: number): boolean {
  return REDIRECT_STATUSES.has(status);
}
