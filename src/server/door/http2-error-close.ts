import type http2 from "node:http2";

/**
 * Closes an HTTP/2 session that nghttp2 has ended with a connection error.
 *
 * For errors it detects itself (a SETTINGS frame of the wrong length, a
 * frame over the size limit, a header block HPACK cannot decode) nghttp2
 * sends GOAWAY and stops the session, but Node tells JavaScript nothing and
 * leaves the TCP connection open until the idle timeout (120 s here). RFC
 * 9113 §5.4.1 says the connection MUST be closed after that GOAWAY.
 *
 * What is visible from here: the peer's bytes (socket.bytesRead), our bytes
 * (socket.bytesWritten) and the session's outbound queue. A stopped session
 * never sends again. So when the peer has sent something since the last
 * check and then fallen quiet for one interval, the session is pinged: a
 * live session writes the PING at once (its queue empties, or the peer
 * acknowledges it); a stopped one keeps it queued and writes nothing, and
 * is destroyed at the next check. A peer that sends nothing new is never
 * pinged, so idle sessions see no extra traffic and still end at the idle
 * timeout.
 */
export function closeSessionAfterConnectionError(session: http2.ServerHttp2Session, intervalMs: number): void {
  let checkedBytes = 0;
  let lastBytes = -1;
  let probe: { readonly written: number; acknowledged: boolean } | null = null;

  const check = () => {
    const socket = session.socket as http2.ServerHttp2Session["socket"] | undefined;
    if (session.destroyed || socket === undefined) return;
    if (probe !== null) {
      const stopped = !probe.acknowledged && socket.bytesWritten === probe.written && (session.state.outboundQueueSize ?? 0) > 0;
      probe = null;
      if (stopped) {
        session.destroy();
        return;
      }
      checkedBytes = socket.bytesRead;
      lastBytes = checkedBytes;
      return;
    }
    const bytes = socket.bytesRead;
    const quietAfterNews = bytes !== checkedBytes && bytes === lastBytes;
    lastBytes = bytes;
    if (!quietAfterNews) return;
    const started = { written: socket.bytesWritten, acknowledged: false };
    // ping() throws only for a session already closing or destroyed; either way nothing is left to check.
    try {
      session.ping((error) => {
        if (error === null) started.acknowledged = true;
      });
    } catch {
      return;
    }
    probe = started;
  };

  const timer = setInterval(check, intervalMs);
  timer.unref();
  session.once("close", () => clearInterval(timer));
}
