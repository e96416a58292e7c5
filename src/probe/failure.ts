/** The stage of a hop at which something went wrong (spec §2.2 failedStage). */
export type FailureStage = "dns" | "connect" | "tls" | "http";

/**
 * Why a hop produced no usable response. A value, never a string parsed later:
 * diagnostics decide from `stage`, `timedOut` and `cause`; people read `reason`.
 */
export interface ProbeFailure {
  readonly stage: FailureStage;
  /** True when the hop's own timeout or the caller's deadline ended it. */
  readonly timedOut: boolean;
  /** Machine-readable cause: ENOTFOUND, ECONNREFUSED, CERT_HAS_EXPIRED, UND_ERR_HEADERS_TIMEOUT, ... */
  readonly cause: string;
  /** Short human sentence: "DNS lookup failed: no such host". */
  readonly reason: string;
  /** Milliseconds from the start of the hop until the failure was known. */
  readonly elapsedMs: number;
  /** The address dialled, when the hop got that far. */
  readonly remoteAddress: string | null;
}
