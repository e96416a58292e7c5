import type { ClientHttp2Session } from "node:http2";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { BodyDrain } from "./body-drain.js";
import type { ConnectionHandle, TlsDetail } from "../hop-types.js";
import { guarded } from "../failure.js";

/**
 * How long a connection kept after a same-origin redirect waits for the hop
 * that follows it. The diagnostic asks for that hop as soon as it has read
 * the redirect (milliseconds); a check that ends instead (too many
 * redirects, a refused next URL, its caller gone) leaves the connection to
 * this timer.
 */
export const KEPT_IDLE_MS = 2_000;

/** Kept connections per prober (per probe thread) by default; beyond it a redirect's connection is closed as before. 0 keeps none. */
export const MAX_KEPT = 4_096;

/** What a reused connection still tells the hop that reuses it. */
export interface KeptOrigin {
  /** The URL origin the connection was made for (scheme, host, port). */
  readonly origin: string;
  readonly remote: { readonly address: string; readonly family: 4 | 6 };
  readonly tls: TlsDetail | null;
}

/**
 * An open connection that can carry a request: HTTP/1.1 over its socket, or
 * a new stream of its HTTP/2 session.
 */
export type OpenConnection =
  | { readonly protocol: "http/1.1"; readonly socket: Socket }
  | { readonly protocol: "h2"; readonly socket: TLSSocket; readonly session: ClientHttp2Session };

/**
 * What a hop hands the keeper: an HTTP/1.1 connection with the drain that
 * reads the rest of its body (the socket paused), or an HTTP/2 session,
 * whose answered stream is already closed (streams are independent).
 */
export type Keepable =
  | { readonly protocol: "http/1.1"; readonly socket: Socket; readonly drain: BodyDrain }
  | Extract<OpenConnection, { protocol: "h2" }>;

export interface ConnectionKeeper {
  /** False when it keeps none (SITEDIAG_REUSE_CONNECTIONS=false): requests then ask the server to close. */
  readonly keeps: boolean;
  /** Keeps a connection whose response head was read. Null when it cannot be kept: the caller closes it. */
  keep(connection: Keepable, origin: KeptOrigin): ConnectionHandle | null;
  /**
   * The kept connection, once: for the same origin, still open, and over
   * HTTP/1.1 its body read to the end with nothing after it. Null otherwise
   * (it is closed then).
   */
  take(handle: ConnectionHandle, origin: string): { readonly connection: OpenConnection; readonly kept: KeptOrigin } | null;
  /** Closes every kept connection (the prober is closing). */
  close(): void;
}

interface Kept {
  readonly connection: OpenConnection;
  readonly origin: KeptOrigin;
  /** Over HTTP/1.1, the body is read to its end: the connection can carry the next request. */
  ready: boolean;
  readonly timer: NodeJS.Timeout;
  /** Undoes what keeping it listened to. */
  release: () => void;
}

/** Ids unique in this thread across keepers, so a handle can never name another prober's connection. */
let nextId = 1;

/**
 * Connections kept from a redirect to the hop that follows it, as browsers
 * and curl keep them: one check's next request to the same origin goes over
 * the connection already made, checked and (for HTTPS) verified. Kept only
 * for that next hop of that check (the handle is passed along by the
 * diagnostic), never pooled across checks. Held unref'd: a kept connection
 * never keeps a CLI or a test process alive.
 */
export function createConnectionKeeper(maxKept: number = MAX_KEPT, idleMs: number = KEPT_IDLE_MS): ConnectionKeeper {
  const kept = new Map<number, Kept>();

  const drop = (id: number): void => {
    const entry = kept.get(id);
    if (entry === undefined) return;
    kept.delete(id);
    clearTimeout(entry.timer);
    entry.release();
    closeConnection(entry.connection);
  };

  return {
    keeps: maxKept > 0,
    keep(connection, origin) {
      if (kept.size >= maxKept || connection.socket.destroyed) return null;
      if (connection.protocol === "http/1.1" && connection.drain.state() === "broken") return null;
      if (connection.protocol === "h2" && (connection.session.closed || connection.session.destroyed)) return null;
      const id = nextId++;
      const onGone = () => drop(id);
      const timer = setTimeout(onGone, idleMs);
      timer.unref();
      const entry: Kept = {
        connection: connection.protocol === "h2" ? connection : { protocol: "http/1.1", socket: connection.socket },
        origin,
        ready: connection.protocol === "h2" || connection.drain.state() === "done",
        timer,
        release: () => undefined,
      };
      entry.release =
        connection.protocol === "h2"
          ? watchSession(connection.session, onGone)
          : drainSocket(connection.socket, connection.drain, () => (entry.ready = true), onGone);
      kept.set(id, entry);
      return { id };
    },

    take(handle, origin) {
      const entry = kept.get(handle.id);
      if (entry === undefined) return null;
      kept.delete(handle.id);
      clearTimeout(entry.timer);
      entry.release();
      const { connection } = entry;
      const closed =
        connection.socket.destroyed || (connection.protocol === "h2" && (connection.session.closed || connection.session.destroyed));
      if (!entry.ready || entry.origin.origin !== origin || closed) {
        closeConnection(connection);
        return null;
      }
      if (connection.protocol === "h2") connection.session.ref();
      else connection.socket.ref();
      return { connection, kept: entry.origin };
    },

    close() {
      for (const id of [...kept.keys()]) drop(id);
    },
  };
}

/** Reads the rest of an HTTP/1.1 body off a kept socket; a byte past its end, or the socket going, lets it go. */
function drainSocket(socket: Socket, drain: BodyDrain, onDone: () => void, onGone: () => void): () => void {
  // A kept socket's bytes are the target's too: what reading them throws lets the connection go, never the thread.
  const onData = guarded((chunk: Buffer) => {
    const state = drain.push(chunk);
    if (state === "broken") return onGone();
    if (state === "done") onDone();
  }, onGone);
  socket.on("data", onData);
  socket.once("end", onGone);
  socket.once("close", onGone);
  socket.unref();
  // The exchange paused it on its way out, so no byte went unread in between.
  socket.resume();
  return () => {
    socket.off("data", onData);
    socket.off("end", onGone);
    socket.off("close", onGone);
  };
}

/** A kept session goes when the server says GOAWAY or the connection closes; its errors are heard by the session's own sink. */
function watchSession(session: ClientHttp2Session, onGone: () => void): () => void {
  session.once("close", onGone);
  session.once("goaway", onGone);
  session.unref();
  return () => {
    session.off("close", onGone);
    session.off("goaway", onGone);
  };
}

/** Ends a connection the hop or the keeper holds; an HTTP/2 session is closed first, gracefully (closeSession). */
export function closeConnection(connection: OpenConnection): void {
  if (connection.protocol === "h2") return closeSession(connection.session, connection.socket);
  connection.socket.destroy();
}

/**
 * The longest an HTTP/2 session waits to write what it still owes (a stream's
 * RST_STREAM, its GOAWAY) before it is destroyed anyway. A few bytes into a
 * kernel buffer take microseconds; this bounds a session whose socket cannot
 * take even those.
 */
const SESSION_CLOSE_MS = 1_000;

/**
 * Closes a session gracefully (GOAWAY, the frames it owes written), not by
 * destroying it outright. A stream whose head nghttp2 refused part-way (a
 * connection-specific field, an upper-case name) is reset with fields of that
 * head still held; destroyed with the reset unwritten, Node leaves the stream
 * to the garbage collector, and should the session be collected first the
 * process aborts ("Assertion failed: (current_nghttp2_memory_) == (0)" in
 * Http2Session's destructor: a hostile site's way to kill the service).
 * Closed so, every stream is let go before its session.
 */
function closeSession(session: ClientHttp2Session, socket: Socket): void {
  if (session.destroyed) {
    socket.destroy();
    return;
  }
  const timer = setTimeout(() => {
    session.destroy();
    socket.destroy();
  }, SESSION_CLOSE_MS);
  timer.unref();
  session.close(() => {
    clearTimeout(timer);
    socket.destroy();
  });
}
