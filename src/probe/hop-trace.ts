import type { FailureStage } from "../shared/failures.js";
import type { TlsDetail } from "./hop-types.js";

/**
 * What one hop has reached so far, written as it happens. A failure's stage is
 * read from here (the phase the hop was in), never guessed from a message.
 */
export interface HopTrace {
  phase: FailureStage;
  readonly startedAt: number;
  dnsDoneAt: number | null;
  connectStartedAt: number | null;
  tcpConnectedAt: number | null;
  tlsDoneAt: number | null;
  /** When the request was written to the connection. */
  requestSentAt: number | null;
  firstByteAt: number | null;
  /** When the final response head was read: a hop that was answered ends here, whatever it does after. */
  answeredAt: number | null;
  /** The address being dialled, or the one connected. */
  remote: { address: string; family: 4 | 6 } | null;
  /** The session and leaf certificate, kept also when verification failed. */
  tls: TlsDetail | null;
  /** The request went over the connection the check's previous hop kept: no dial, no handshake. */
  connectionReused: boolean;
  /** The first defect of ours the hop met (failure.ts isDefect); the hop logs it once as it ends. */
  defect: { readonly error: unknown } | null;
}

export function startTrace(now: number): HopTrace {
  return {
    phase: "dns",
    startedAt: now,
    dnsDoneAt: null,
    connectStartedAt: null,
    tcpConnectedAt: null,
    tlsDoneAt: null,
    requestSentAt: null,
    firstByteAt: null,
    answeredAt: null,
    remote: null,
    tls: null,
    connectionReused: false,
    defect: null,
  };
}
