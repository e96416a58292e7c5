import { Code, ConnectError } from "@connectrpc/connect";
import { API_KEY_HEADER, API_KEY_QUERY_PARAMETER } from "./api-key.js";
import { StoreUnavailableError } from "./store.js";

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
