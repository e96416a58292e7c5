import type { Code, ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus, codeToString } from "@connectrpc/connect/protocol-connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { API_VERSION } from "../../limits.js";

/** The envelope's meta: which operation answered (null when no route matched) and the API version. */
export interface RestMeta {
  readonly tool: string | null;
  readonly version: string;
}

export function metaFor(tool: string | null): RestMeta {
  return { tool, version: API_VERSION };
}

/** `{"ok": true, "data": ..., "meta": ...}`: a diagnostic that completed, whatever it found. */
export function successBody(data: JsonObject, meta: RestMeta): JsonObject {
  return { ok: true, data, meta: { ...meta } };
}

/**
 * `{"ok": false, "error": {"code", "message"}, "meta"}`. The code is the
 * Connect code name the RPC doors return for the same failure, so a client
 * can switch on one vocabulary whichever door it uses.
 */
export function errorBody(code: string, message: string, meta: RestMeta): JsonObject {
  return { ok: false, error: { code, message }, meta: { ...meta } };
}

export function errorBodyOf(error: ConnectError, meta: RestMeta): JsonObject {
  return errorBody(codeToString(error.code), error.rawMessage, meta);
}

/**
 * The HTTP status of a REST error is the one the Connect protocol itself
 * uses for the code (invalid_argument 400, unauthenticated 401,
 * resource_exhausted 429, unimplemented 501, unavailable 503, internal and
 * unknown 500, ...), so the REST and Connect doors agree on statuses too.
 */
export function httpStatusOf(code: Code): number {
  return codeToHttpStatus(code);
}
