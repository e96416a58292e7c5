import { AsyncLocalStorage } from "node:async_hooks";
import type { Door } from "../server/door.js";

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
  /** Host of the target the caller asked about, never the rest of its URL. */
  targetHost: string | null;
}

/**
 * Carries the record from the HTTP handler into the interceptors. Async
 * context follows the request through the REST adapter's in-process call and
 * Connect's handlers alike, with no change to how either passes values.
 */
const records = new AsyncLocalStorage<CallRecord>();

export function runWithCallRecord<T>(record: CallRecord, work: () => T): T {
  return records.run(record, work);
}

/** The record of the request being served, or undefined outside one (a test calling a handler directly). */
export function currentCallRecord(): CallRecord | undefined {
  return records.getStore();
}
