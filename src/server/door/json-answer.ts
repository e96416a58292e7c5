import type http from "node:http";
import type http2 from "node:http2";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Code, ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus, codeToString } from "@connectrpc/connect/protocol-connect";
import { API_VERSION } from "../../shared/limits.js";

export type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;
export type NodeResponse = http.ServerResponse | http2.Http2ServerResponse;

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

/**
 * Writes a complete JSON response. Everything the REST door and the health
 * endpoints answer is computed per request, so nothing may be cached.
 */
export function sendJson(response: NodeResponse, status: number, body: JsonValue, headers?: Headers): void {
  const payload = Buffer.from(JSON.stringify(body), "utf8");
  if (headers !== undefined) setHeadersOn(response, headers);
  response.setHeader("content-type", "application/json; charset=utf-8");
  response.setHeader("content-length", payload.byteLength);
  response.setHeader("cache-control", "no-store");
  response.writeHead(status);
  response.end(payload);
}

/** An empty response (204 preflight, HEAD). */
export function sendEmpty(response: NodeResponse, status: number, headers?: Headers): void {
  if (headers !== undefined) setHeadersOn(response, headers);
  response.writeHead(status);
  response.end();
}

/** Sets each header (or each that `only` keeps) on the response, replacing one of the same name set before. */
export function setHeadersOn(response: NodeResponse, headers: Headers, only?: (name: string) => boolean): void {
  headers.forEach((value, name) => {
    if (only === undefined || only(name)) response.setHeader(name, value);
  });
}

/** 405 with Allow; `cors` gets the Allow header and goes on the answer. */
export function methodNotAllowed(response: NodeResponse, allowed: readonly string[], cors: Headers, tool: string | null): void {
  cors.set("allow", allowed.join(", "));
  const message = `use ${allowed.filter((method) => method !== "OPTIONS").join(" or ")}`;
  // 405 has no Connect code of its own; unimplemented is the code for "this operation is not served".
  sendJson(response, 405, errorBody("unimplemented", message, metaFor(tool)), cors);
}

/** A failure of ours, told to `onDefect`, and the 500 the client gets if it can still get one. */
export function answerDefect(response: NodeResponse, reason: unknown, onDefect: (error: unknown) => void): void {
  onDefect(reason);
  // An answer already complete, or a response with no client left, has nothing to add.
  if (response.writableEnded || response.destroyed) return;
  if (response.headersSent) {
    response.destroy();
    return;
  }
  sendJson(response, 500, errorBody("internal", "the server failed to answer", metaFor(null)));
}
