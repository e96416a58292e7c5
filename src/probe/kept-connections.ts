import type { Socket } from "node:net";
import { threadId } from "node:worker_threads";
import type { BodyDrain } from "./body-drain.js";
import type { ConnectionHandle, TlsDetail, TlsSummary } from "./hop-types.js";

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
  readonly tls: TlsSummary | null;
  readonly tlsDetail: TlsDetail | null;
}

export interface ConnectionKeeper {
  /** False when it keeps none (SITEDIAG_REUSE_CONNECTIONS=false): requests then ask the server to close. */
  readonly keeps: boolean;
  /**
   * Keeps an HTTP/1.1 connection whose response head was read, reading the
   * rest of its body through `drain`. Null when it cannot be kept: the
   * caller closes it.
   */
  keep(socket: Socket, origin: KeptOrigin, drain: BodyDrain): ConnectionHandle | null;
  /**
   * The kept connection, once: for the same origin, its body read to the
   * end, nothing after it, still open. Null otherwise (it is closed then).
   */
  take(handle: ConnectionHandle, origin: string): { readonly socket: Socket; readonly kept: KeptOrigin } | null;
  /** Closes every kept connection (the prober is closing). */
  close(): void;
}

interface Kept {
  readonly socket: Socket;
  readonly origin: KeptOrigin;
  /** The body is read to its end: the connection can carry the next request. */
  ready: boolean;
  readonly timer: NodeJS.Timeout;
  readonly onData: (chunk: Buffer) => void;
  readonly onGone: () => void;
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
    release(entry);
    entry.socket.destroy();
  };

  return {
    keeps: maxKept > 0,
    keep(socket, origin, drain) {
      if (kept.size >= maxKept || drain.state() === "broken" || socket.destroyed) return null;
      const id = nextId++;
      const onData = (chunk: Buffer) => {
        const state = drain.push(chunk);
        if (state === "broken") return drop(id);
        if (state === "done") entry.ready = true;
      };
      const onGone = () => drop(id);
      const timer = setTimeout(onGone, idleMs);
      timer.unref();
      const entry: Kept = { socket, origin, ready: drain.state() === "done", timer, onData, onGone };
      kept.set(id, entry);
      socket.on("data", onData);
      socket.once("end", onGone);
      socket.once("close", onGone);
      socket.unref();
      // The exchange paused it on its way out, so no byte went unread in between.
      socket.resume();
      return { threadId, id };
    },

    take(handle, origin) {
      if (handle.threadId !== threadId) return null;
      const entry = kept.get(handle.id);
      if (entry === undefined) return null;
      kept.delete(handle.id);
      release(entry);
      if (!entry.ready || entry.origin.origin !== origin || entry.socket.destroyed) {
        entry.socket.destroy();
        return null;
      }
      entry.socket.ref();
      return { socket: entry.socket, kept: entry.origin };
    },

    close() {
      for (const id of [...kept.keys()]) drop(id);
    },
  };
}

function release(entry: Kept): void {
  clearTimeout(entry.timer);
  entry.socket.off("data", entry.onData);
  entry.socket.off("end", entry.onGone);
  entry.socket.off("close", entry.onGone);
}
