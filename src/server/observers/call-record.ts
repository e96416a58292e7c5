import { type ContextValues, createContextKey, createContextValues } from "@connectrpc/connect";
import { sharedClockMs } from "../../probe/clock.js";
import { callClockKey } from "../../service/timeouts-from.js";
import { type Door, doorKey } from "../rpc/door.js";

/**
 * What is learnt about one HTTP request while it is served, for its log line
 * and its request metric. The HTTP layer creates it (id, start, path); the
 * observing interceptor fills in what only the RPC layer knows (door,
 * operation, outcome, target host), because on the gRPC door the outcome
 * travels in a trailer the HTTP layer never parses.
 */
export interface CallRecord {
  readonly requestId: string;
  readonly startedAt: bigint;
  door: Door | undefined;
  /** RPC method name: "CheckSite", "TraceRedirects". */
  operation: string | undefined;
  /** Connect code name of the call's outcome: "ok", "invalid_argument", "resource_exhausted", ... */
  outcome: string | undefined;
  /**
   * The target URL the caller asked about, as given. Only its host is ever
   * logged, worked out when the line is written (not at all when the line
   * is below LOG_LEVEL).
   */
  target: string | null;
  /** When the call's timeouts start (service/timeouts-from.ts): set at arrival, moved by admission past a wait for a turn. */
  timeoutsFrom: number;
}

/**
 * Carries the record from the HTTP handler to the interceptors, by hand:
 * the request observer attaches it to the Node request, each door copies it
 * into the call's context values, and the observing interceptor reads it
 * there. (An AsyncLocalStorage would do it implicitly, but on Node 20 it
 * installs promise hooks that every promise of every request pays for.)
 */
const records = new WeakMap<object, CallRecord>();

/** The context value the observing interceptor reads; undefined outside an observed request (a test calling a handler directly). */
export const callRecordKey = createContextKey<CallRecord | undefined>(undefined, { description: "the HTTP request's call record" });

export function attachCallRecord(request: object, record: CallRecord): void {
  records.set(request, record);
}

/** The record attached to a Node request, if its server observes requests. */
export function callRecordOf(request: object): CallRecord | undefined {
  return records.get(request);
}

/**
 * The context values a call starts with on any door: the door, and the
 * request's call record when the server observes requests.
 */
export function callContextValues(request: object, door: Door): ContextValues {
  const record = callRecordOf(request);
  // Unobserved (a server started without the request observer): the call's clock starts now, as its door takes it.
  return createContextValues().set(doorKey, door).set(callRecordKey, record).set(callClockKey, record ?? { timeoutsFrom: sharedClockMs() });
}
