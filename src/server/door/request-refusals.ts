import type { Duplex } from "node:stream";
import type { CorsPolicy } from "./cors-policy.js";
import { errorBody, metaFor, type NodeRequest, type NodeResponse, sendJson } from "./json-answer.js";
import { pathOf } from "./route-table.js";

// Requests refused before any route sees them: a target over the limit, and
// what Node's HTTP/1.1 parser rejects. Both answer with the port's JSON error
// envelope, naming the tool of the path when there is one.

/**
 * Answers 414 with a JSON error for a request target (path and query) longer
 * than `maxBytes`, before any route sees it, and says so (true). Anything
 * shorter reaches its route, where the diagnostic judges the url (a url over
 * MAX_URL_LENGTH is a charged 400 naming its tool, as the contract wants for
 * an invalid url); the cap only bounds what the server holds. The 414 still
 * names the tool the path belongs to (`toolOf`), so a caller sees which
 * operation refused it.
 */
export function refusedLongTarget(
  request: NodeRequest,
  response: NodeResponse,
  maxBytes: number,
  toolOf: (path: string) => string | null,
  cors: CorsPolicy,
): boolean {
  const target = request.url ?? "/";
  if (Buffer.byteLength(target, "utf8") <= maxBytes) return false;
  const message = `the request target is longer than ${maxBytes} bytes`;
  sendJson(response, 414, errorBody("invalid_argument", message, metaFor(toolOf(pathOf(target)))), cors.simpleHeaders());
  return true;
}

interface ParserRefusal {
  readonly status: number;
  readonly reason: string;
  /** Connect code name, as every other JSON error of the port carries. */
  readonly code: string;
  readonly message: string;
}

/**
 * Answers a request Node's HTTP/1.1 parser rejects (it never becomes a
 * request, so no handler sees it) with the port's JSON error envelope
 * instead of Node's bare status line, then closes the connection, as Node
 * itself does: after a parse error the byte stream cannot be trusted to
 * hold another request.
 *   - a request head over the limit: 431, invalid_argument
 *   - a head (or whole request) not received in time: 408, deadline_exceeded
 *   - anything else unparsable: 400, invalid_argument
 * Nothing is written when the socket cannot take it any more, or when a
 * response on the connection has already begun (the bytes would be mixed
 * into it); the connection is just closed.
 */
export function answerClientError(
  maxHeaderBytes: number,
  toolOfPath: (path: string) => string | null = () => null,
): (error: Error & { code?: string; rawPacket?: unknown }, socket: Duplex) => void {
  return (error, socket) => {
    if (!socket.writable || responseInProgress(socket)) {
      socket.destroy();
      return;
    }
    const refusal = refusalFor(error.code, maxHeaderBytes);
    const path = requestLinePath(error.rawPacket);
    const body = Buffer.from(
      JSON.stringify(errorBody(refusal.code, refusal.message, metaFor(path === null ? null : toolOfPath(path)))),
      "utf8",
    );
    const head =
      `HTTP/1.1 ${refusal.status} ${refusal.reason}\r\n` +
      "Content-Type: application/json; charset=utf-8\r\n" +
      `Content-Length: ${body.byteLength}\r\n` +
      "Cache-Control: no-store\r\n" +
      "Connection: close\r\n\r\n";
    socket.end(Buffer.concat([Buffer.from(head, "latin1"), body]), () => socket.destroy());
  };
}

function refusalFor(code: string | undefined, maxHeaderBytes: number): ParserRefusal {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return {
        status: 431,
        reason: "Request Header Fields Too Large",
        code: "invalid_argument",
        message: `the request head is over ${Math.floor(maxHeaderBytes / 1024)} KiB`,
      };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, reason: "Request Timeout", code: "deadline_exceeded", message: "the request was not received in time" };
    case undefined:
    default:
      return { status: 400, reason: "Bad Request", code: "invalid_argument", message: "the request is not valid HTTP/1.1" };
  }
}

/**
 * The path of the request line, when the bytes Node hands over with the error
 * start with one (a whole small request does; a long one may not, and then
 * the answer names no tool). Only the first bytes are looked at.
 */
function requestLinePath(rawPacket: unknown): string | null {
  if (!Buffer.isBuffer(rawPacket)) return null;
  const line = /^[A-Z]{3,7} (\/[^\s]*)/.exec(rawPacket.subarray(0, 256).toString("latin1"));
  return line?.[1] === undefined ? null : pathOf(line[1]);
}

/** Node keeps the response being written on the socket (`_httpMessage`); once its head is out, nothing else may be written. */
function responseInProgress(socket: Duplex): boolean {
  const current: unknown = Reflect.get(socket, "_httpMessage");
  return typeof current === "object" && current !== null && Reflect.get(current, "headersSent") === true;
}
