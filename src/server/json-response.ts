import type http from "node:http";
import type http2 from "node:http2";
import type { JsonValue } from "@bufbuild/protobuf";

export type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;
export type NodeResponse = http.ServerResponse | http2.Http2ServerResponse;

/**
 * Writes a complete JSON response. Everything the REST door and the health
 * endpoints answer is computed per request, so nothing may be cached.
 */
export function sendJson(response: NodeResponse, status: number, body: JsonValue, headers: Headers = new Headers()): void {
  const payload = Buffer.from(JSON.stringify(body), "utf8");
  headers.forEach((value, name) => response.setHeader(name, value));
  response.setHeader("content-type", "application/json; charset=utf-8");
  response.setHeader("content-length", payload.byteLength);
  response.setHeader("cache-control", "no-store");
  response.writeHead(status);
  response.end(payload);
}

/** An empty response (204 preflight, HEAD). */
export function sendEmpty(response: NodeResponse, status: number, headers: Headers = new Headers()): void {
  headers.forEach((value, name) => response.setHeader(name, value));
  response.writeHead(status);
  response.end();
}
