import { Code, ConnectError } from "@connectrpc/connect";
import { API_KEY_HEADER, API_KEY_QUERY_PARAMETER, digestApiKey, isWellFormedApiKey } from "./api-key.js";
import { StoreUnavailableError, type AccessStore } from "./store.js";

export interface KeyGateOptions {
  /** How long a key seen active is taken as known without asking the store again. Default 30 s. */
  readonly knownForMs?: number;
  /** Most keys remembered as known; the oldest is forgotten first. Default 10,000. */
  readonly maxKnown?: number;
}

/** Null when the presented key may go on to its call; else the refusal to send. */
export type KeyGate = (presented: string | null) => Promise<ConnectError | null>;

/**
 * Judges the key a request presents from its headers alone, before its body
 * is read: no key, a malformed one (any length, any character outside the
 * key alphabet, a wrong checksum) or one the store does not know as active
 * is refused here, so an anonymous caller cannot make the port read, inflate
 * or parse anything. Keys found active are remembered for a short time, so
 * the hot path does not pay a store lookup twice per call; the charge that
 * follows still asks the store, so a key revoked meanwhile never gets a
 * call answered, it only gets its body read.
 */
export function createKeyGate(store: AccessStore, options: KeyGateOptions = {}): KeyGate {
  const knownForMs = options.knownForMs ?? 30_000;
  const maxKnown = options.maxKnown ?? 10_000;
  // Insertion order is age order: the first entry is the one to forget.
  const known = new Map<string, number>();

  return async (presented) => {
    if (presented === null || !isWellFormedApiKey(presented)) return unauthenticated();
    const digest = digestApiKey(presented);
    const seenAt = known.get(digest);
    if (seenAt !== undefined && performance.now() - seenAt < knownForMs) return null;
    known.delete(digest);
    let record;
    try {
      record = await store.findKeyByDigest(digest);
    } catch (error) {
      const refusal = unavailableIfStoreDown(error);
      if (refusal instanceof ConnectError) return refusal;
      throw error;
    }
    if (record === undefined || record.revokedAtMs !== null) return unauthenticated();
    known.set(digest, performance.now());
    if (known.size > maxKnown) known.delete(known.keys().next().value as string);
    return null;
  };
}

/** One message for a missing, malformed, unknown or revoked key, so a caller cannot tell them apart. */
const UNAUTHENTICATED_MESSAGE = `a valid API key is required in the ${API_KEY_HEADER} header or the ${API_KEY_QUERY_PARAMETER} query parameter`;

export function unauthenticated(): ConnectError {
  return new ConnectError(UNAUTHENTICATED_MESSAGE, Code.Unauthenticated);
}

/**
 * Fail closed: credits are a budget, so no store means no call, never an
 * unmetered one. Anything else the store threw is a defect and stays as it is.
 */
export function unavailableIfStoreDown(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) {
    return new ConnectError("the credit store is unreachable; try again shortly", Code.Unavailable, undefined, undefined, error);
  }
  return error;
}
