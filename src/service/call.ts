import { createContextKey, type HandlerContext } from "@connectrpc/connect";
import type { Overload } from "../probe/overload.js";

/** Which of the service's doors a call came through; for logs and metrics, never for behaviour. */
export type Door = "rest" | "connect" | "grpc" | "grpc-web";

/** The operation a call asks for, as the server's route table names it. */
export interface CallRoute {
  /** RPC method name: "CheckSite", "TraceRedirects". */
  readonly operation: string;
  /** The REST door's tool ("is-site-down", the envelope's meta.tool); null for an RPC path. */
  readonly tool: string | null;
}

/**
 * What became of a call, for its log line and its metrics, told by whoever
 * learns it (the observing interceptor, the door when admission refused the
 * call, the service for each overload answer) and read by the request
 * observer alone. On the gRPC door the outcome travels in a trailer the
 * HTTP layer never parses, so it has to be told.
 */
export interface CallReport {
  /** Connect code name of the call's outcome: "ok", "invalid_argument", "resource_exhausted", ...; undefined until told. */
  outcome: string | undefined;
  /** The target URL the caller asked about, as given; only its host is ever logged, worked out when the line is written. */
  target: string | null;
  /** Told of each diagnostic of the call answered as overload (a batch's items one by one): the overload metric. */
  readonly overloaded: (overload: Overload) => void;
}

/**
 * One diagnostic call as its door took it in: built once, when the call is
 * admitted (server/door/call.ts), never changed after, and handed down
 * explicitly, to the service through `callKey`.
 */
export interface Call {
  /** The request id (the caller's sane x-request-id, else a new one); "" when no observer gave one. */
  readonly id: string;
  readonly door: Door;
  readonly route: CallRoute;
  /**
   * When the call's timeouts start, on the shared clock (probe/shared-clock.ts):
   * its arrival, or, when it waited for a turn on the probe threads, the end of
   * that wait. A caller told "6 s per request" expects the answer 6 s after
   * asking, so the time the service spent taking the call in (its key, its
   * charge; a burst of a thousand calls queues there for hundreds of
   * milliseconds) comes out of the first request's timeout. The wait for a turn
   * does not: it is the service holding the check back, not the site being slow.
   */
  readonly timeoutsFrom: number;
  /**
   * A problem the door found while turning its input into the request message
   * (a query parameter given twice, a number that is not one). The door cannot
   * answer it itself: the contract charges credits before parameters are
   * validated, and charging happens in interceptors that run before the
   * service. So the service rejects the call, after the charge, exactly as it
   * rejects an invalid URL. Undefined when the input mapped cleanly.
   */
  readonly inputProblem: string | undefined;
  /** Where the call's outcome is told; see CallReport. */
  readonly report: CallReport;
}

/** The one context value the server sets for a diagnostic call; undefined when a handler is called directly (a test, the CLI). */
export const callKey = createContextKey<Call | undefined>(undefined, { description: "the call as its door took it in" });

export function callOf(context: Pick<HandlerContext, "values">): Call | undefined {
  return context.values.get(callKey);
}
