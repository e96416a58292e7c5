import http from "node:http";
import http2 from "node:http2";
import type net from "node:net";

// How long, and how much, an HTTP/1.1 client answered before its body was read may go on sending it.
const LINGER_MS = 2_000;
const LINGER_MAX_BYTES = 8 * 1024 * 1024;

// How long a stream answered before its body was read may keep sending it.
const UNREAD_BODY_RESET_MS = 500;

/**
 * The one way an answer written before its request body was all read ends,
 * whichever door wrote it (a refusal from the headers: 401, 429, 503; a
 * body declared or found too large: 413, resource_exhausted; a message
 * that does not decode) and however the body was framed. The listener puts
 * every request of both protocols through here before any door sees it;
 * the doors only stop reading (requestBody never destroys the request) and
 * answer, and their in-flight slots go back with the answer, not with the
 * close that follows it (releaseWithAnswer, call.ts).
 *
 * - HTTP/1.1: the connection cannot serve another request, since the rest
 *   of this body would come first, so the answer says `Connection: close`.
 *   Closing outright would make the kernel reset the connection over the
 *   unread bytes, and a reset can destroy the answer before the client reads
 *   it; reading the rest, as Node does on a kept connection, would let the
 *   client make us read any amount. So: a lingering close, as nginx does:
 *   half-close after the answer, discard what still comes for a short while
 *   (or up to a size), then close. The socket is the one the request
 *   arrived on, taken now: a request that stopped being read may have let
 *   go of it since, and one already destroyed is left alone.
 * - HTTP/2: tell the client to stop sending rather than let it fill
 *   flow-control windows for a body nobody will read (RFC 9113 §8.1 allows
 *   RST_STREAM NO_ERROR after a complete response for exactly this). The
 *   reset waits a moment: gRPC's trailers are written after 'finish', and a
 *   reset sent at once would cut them off.
 */
export function closeAfterEarlyAnswer(
  request: http.IncomingMessage | http2.Http2ServerRequest,
  response: http.ServerResponse | http2.Http2ServerResponse,
): void {
  if (request instanceof http2.Http2ServerRequest) resetAfterEarlyAnswer(request.stream);
  else if (response instanceof http.ServerResponse) lingerAfterEarlyAnswer(request, response);
}

function lingerAfterEarlyAnswer(request: http.IncomingMessage, response: http.ServerResponse): void {
  const socket = request.socket;
  const writeHead = response.writeHead;
  // Decided when the head goes out: the only moment both the answer and the body's state are known.
  response.writeHead = function (this: http.ServerResponse, ...args: Parameters<typeof writeHead>) {
    if (!request.complete && !this.headersSent) {
      this.setHeader("connection", "close");
      if (!socket.destroyed) lingerOnClose(socket, request);
    }
    return writeHead.apply(this, args);
  } as typeof writeHead;
}

/**
 * Makes Node's close after the answer a half-close that keeps reading (and
 * discarding) for LINGER_MS or LINGER_MAX_BYTES. The request is resumed:
 * a door that stopped reading left it paused, and Node dumps only bodies
 * nobody began to read.
 */
function lingerOnClose(socket: net.Socket, request: http.IncomingMessage): void {
  socket.destroySoon = () => {
    if (socket.destroyed) return;
    socket.end();
    let discarded = 0;
    const count = (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > LINGER_MAX_BYTES) socket.destroy();
    };
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    socket.on("data", count);
    socket.once("close", () => clearTimeout(timer));
    request.resume();
  };
}

/**
 * After the reset (or, when the client's END_STREAM met ours, with no reset
 * needed: close() does nothing on a closed stream) the stream is destroyed
 * here. Node destroys a stream closed with NO_ERROR only once its body has
 * been read to the end ('end'), and no door reads a body it answered
 * early: the stream would stay open for good, and with it its session and
 * socket, which then ignore the client's close too. Nothing is lost: the
 * answer is all written ('finish'), and what is left of the body is
 * unwanted.
 */
function resetAfterEarlyAnswer(stream: http2.ServerHttp2Stream): void {
  if (stream.endAfterHeaders) return;
  stream.once("finish", () => {
    if (stream.readableEnded) return;
    const reset = setTimeout(() => {
      if (stream.readableEnded || stream.destroyed) return;
      stream.close(http2.constants.NGHTTP2_NO_ERROR);
      stream.destroy();
    }, UNREAD_BODY_RESET_MS);
    stream.once("close", () => clearTimeout(reset));
  });
}
