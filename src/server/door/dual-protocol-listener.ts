import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { closeAfterEarlyAnswer } from "./early-answer.js";
import { answerClientError } from "./request-refusals.js";
import { closeSessionAfterConnectionError } from "./http2-error-close.js";

/** The handler both protocols share; Node's http2 compatibility API lets one function serve both. */
export type NodeRequestHandler = (
  request: http.IncomingMessage | http2.Http2ServerRequest,
  response: http.ServerResponse | http2.Http2ServerResponse,
) => void;

export interface ConnectionLimits {
  /** Limit on one request's header section, in bytes, for both protocols. */
  readonly maxHeaderBytes: number;
  /** Time a client has to send a complete request head (and, first, enough bytes to tell its protocol). */
  readonly headersTimeoutMs: number;
  /** An HTTP/1.1 connection idle this long between requests is closed. */
  readonly keepAliveTimeoutMs: number;
  /** An HTTP/2 session with no frames in either direction for this long is closed. */
  readonly http2IdleTimeoutMs: number;
  /** Time to receive a whole request body: HTTP/1.1's request timeout (408), and each HTTP/2 stream's body deadline. */
  readonly requestTimeoutMs: number;
  /** Concurrent streams one HTTP/2 connection may open (SETTINGS_MAX_CONCURRENT_STREAMS). */
  readonly http2MaxStreams: number;
  /** Memory one HTTP/2 session may hold (nghttp2's buffers, header tables, unsent data) before it refuses new streams. */
  readonly http2SessionMemoryMiB: number;
  /** Open connections the port holds in all; later ones are closed as they arrive. */
  readonly maxConnections: number;
  /** Open connections one peer address may hold; later ones are closed as they arrive. */
  readonly maxConnectionsPerPeer: number;
}

export interface DualProtocolListenerOptions extends ConnectionLimits {
  /** How soon a session nghttp2 has stopped for a connection error is found and closed (two to three of these). Default 1 s. */
  readonly http2ErrorCheckMs?: number;
  readonly host: string;
  readonly port: number;
  readonly handler: NodeRequestHandler;
  /** The REST tool a path belongs to, so a request the parser refuses can still name it; none when absent. */
  readonly toolOfPath?: (path: string) => string | null;
}

export interface DualProtocolListener {
  readonly port: number;
  /** The bound address ("127.0.0.1", "::"). */
  readonly address: string;
  /**
   * Stops accepting connections before it returns, closes idle ones and asks
   * busy ones to end after their current requests. Resolves once every
   * connection is gone.
   */
  close(): Promise<void>;
  /** Cuts every remaining connection, for when the grace period is over. */
  destroyAll(): void;
}

// How soon a session nghttp2 has stopped for a connection error is found and closed (two to three of these).
const HTTP2_ERROR_CHECK_MS = 1_000;

// RFC 9113 §3.4: a client speaking HTTP/2 with prior knowledge opens with these 24 bytes.
const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/**
 * One TCP port for HTTP/1.1 and cleartext HTTP/2. Node's http2 server only
 * falls back to HTTP/1.1 over TLS (ALPN), so the first bytes of each
 * connection decide which server gets it: the HTTP/2 preface goes to the
 * http2 server, anything else to the http server.
 */
export async function listenDualProtocol(options: DualProtocolListenerOptions): Promise<DualProtocolListener> {
  const h1 = http.createServer(
    {
      maxHeaderSize: options.maxHeaderBytes,
      headersTimeout: options.headersTimeoutMs,
      // A request body trickling in is bounded too; Connect bodies are a few hundred bytes.
      requestTimeout: Math.max(options.headersTimeoutMs, options.requestTimeoutMs),
      keepAliveTimeout: options.keepAliveTimeoutMs,
      // Node checks the headers and request timeouts on this interval (30 s by default), which would let a slow client overstay by that much.
      connectionsCheckingInterval: Math.min(1_000, Math.max(50, Math.floor(options.headersTimeoutMs / 2))),
    },
    (request, response) => {
      closeAfterEarlyAnswer(request, response);
      options.handler(request, response);
    },
  );
  // The http server tracks its connections (closeIdleConnections, the
  // headers timeout) from its 'listening' event; this one never listens
  // itself because the TCP server hands it its sockets.
  h1.emit("listening");
  // Requests the parser rejects get the port's JSON error envelope, not Node's bare status line.
  h1.on("clientError", answerClientError(options.maxHeaderBytes, options.toolOfPath));
  h1.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
    // A keep-alive connection busy when close() began becomes idle here; close it then.
    response.once("finish", () => {
      if (closing) setImmediate(() => h1.closeIdleConnections());
    });
  });

  const h2 = http2.createServer(
    {
      // nghttp2 answers streams beyond this with RST_STREAM(REFUSED_STREAM) before any handler runs.
      settings: { maxHeaderListSize: options.maxHeaderBytes, maxConcurrentStreams: options.http2MaxStreams },
      maxSessionMemory: options.http2SessionMemoryMiB,
    },
    (request, response) => {
      closeAfterEarlyAnswer(request, response);
      options.handler(request, response);
    },
  );
  h2.setTimeout(options.http2IdleTimeoutMs);
  // HTTP/1.1's requestTimeout for one stream: a body trickled a byte at a time
  // keeps the session busy, so no idle timeout would ever end it.
  h2.on("stream", (stream: http2.ServerHttp2Stream) => {
    if (stream.endAfterHeaders) return;
    const deadline = setTimeout(() => {
      if (!stream.readableEnded && !stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
    }, options.requestTimeoutMs);
    stream.once("end", () => clearTimeout(deadline));
    stream.once("close", () => clearTimeout(deadline));
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  let closing = false;
  h2.on("session", (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    // A session that opens no stream in time is a slow or idle client holding a socket, as a late request head is on HTTP/1.1.
    const firstStream = setTimeout(() => session.destroy(), options.headersTimeoutMs);
    session.once("stream", () => clearTimeout(firstStream));
    closeSessionAfterConnectionError(session, options.http2ErrorCheckMs ?? HTTP2_ERROR_CHECK_MS);
    session.once("close", () => {
      clearTimeout(firstStream);
      sessions.delete(session);
    });
    if (closing) session.close();
  });

  const sockets = new Set<net.Socket>();
  const perPeer = new Map<string, number>();
  const tcp = net.createServer((socket) => {
    const peer = socket.remoteAddress ?? "";
    const held = perPeer.get(peer) ?? 0;
    if (held >= options.maxConnectionsPerPeer) {
      // Closed before a byte is read: one address cannot hold more of the port than its share.
      socket.destroy();
      return;
    }
    perPeer.set(peer, held + 1);
    sockets.add(socket);
    socket.once("close", () => {
      sockets.delete(socket);
      const left = (perPeer.get(peer) ?? 1) - 1;
      if (left === 0) perPeer.delete(peer);
      else perPeer.set(peer, left);
    });
    // A reset before the protocol is known would otherwise be an unhandled 'error'.
    socket.on("error", () => socket.destroy());
    sniff(socket, options.headersTimeoutMs, (isHttp2) => {
      if (isHttp2) {
        // The http2 session itself reads what is already buffered on the socket.
        h2.emit("connection", socket);
      } else {
        // The http server attaches its parser but leaves a paused socket paused.
        h1.emit("connection", socket);
        socket.resume();
      }
    });
  });

  tcp.maxConnections = options.maxConnections;
  await new Promise<void>((resolve, reject) => {
    tcp.once("error", reject);
    tcp.listen(options.port, options.host, () => {
      tcp.off("error", reject);
      resolve();
    });
  });
  const bound = tcp.address() as net.AddressInfo;

  return {
    port: bound.port,
    address: bound.address,
    close: async () => {
      closing = true;
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()));
      h1.closeIdleConnections();
      for (const session of sessions) session.close();
      await closed;
      h1.close();
      h2.close();
    },
    destroyAll: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

/**
 * Reads until the bytes either match the whole HTTP/2 preface or diverge from
 * it, then puts them back so the chosen server parses the stream from its
 * first byte. A client that sends too little for too long is dropped.
 */
function sniff(socket: net.Socket, timeoutMs: number, decide: (isHttp2: boolean) => void): void {
  let seen = Buffer.alloc(0);
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  socket.once("close", () => clearTimeout(timer));
  const onData = (chunk: Buffer) => {
    seen = Buffer.concat([seen, chunk]);
    const compared = Math.min(seen.length, HTTP2_PREFACE.length);
    const matches = seen.subarray(0, compared).equals(HTTP2_PREFACE.subarray(0, compared));
    if (matches && seen.length < HTTP2_PREFACE.length) return;
    clearTimeout(timer);
    socket.off("data", onData);
    socket.pause();
    socket.unshift(seen);
    decide(matches);
  };
  socket.on("data", onData);
}

/** The base URL that reaches a bound address ("http://127.0.0.1:8080"); a wildcard address is reached over loopback. */
export function baseUrlOf(address: string, port: number): string {
  const host = address === "0.0.0.0" ? "127.0.0.1" : address === "::" ? "[::1]" : address.includes(":") ? `[${address}]` : address;
  return `http://${host}:${port}`;
}
