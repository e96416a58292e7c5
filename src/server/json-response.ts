import type http from "node:http";
import type http2 from "node:http2";
import type { JsonValue } from "@bufbuild/protobuf";

export type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;
export type NodeResponse = http.ServerResponse | http2.Http2ServerResponse;

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
