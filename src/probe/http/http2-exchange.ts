import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  connect,
  constants,
  type IncomingHttpHeaders,
  type IncomingHttpStatusHeader,
} from "node:http2";
import type { TLSSocket } from "node:tls";
import { joinBytes } from "./body-prefix.js";
import { hasNoBody, MAX_INTERIM_RESPONSES, MAX_RESPONSE_HEADER_FIELDS, type ExchangeRequest, type Exchanged } from "./exchange-types.js";
import { now } from "../clock.js";
import { guarded, ProbeProtocolError } from "../failure.js";
import type { ResponseHead } from "./response-head.js";

/** Codes of connection errors that mean the peer went away, named as the HTTP/1.1 exchange names them. */
const SOCKET_GONE: ReadonlySet<string> = new Set(["ECONNRESET", "EPIPE"]);

/**
 * The HTTP/2 session over the TLS connection the hop dialled, pinned and
 * verified (the server chose h2 in ALPN): node:http2 is handed that socket
 * and never dials anything itself. The head limit is offered as
 * SETTINGS_MAX_HEADER_LIST_SIZE. Whoever holds the session destroys it: the
 * hop, or the keeper after a same-origin redirect (its next request is a new
 * stream on it, as a browser sends it).
 */
export function openHttp2Session(socket: TLSSocket, url: URL, maxHeadBytes: number): ClientHttp2Session {
  const session = connect(url.origin, {
    createConnection: () => socket,
    settings: { enablePush: false, maxHeaderListSize: maxHeadBytes },
    // Node's default (128 fields) is below what a 256 KiB head can carry. The bound on fields is ours
    // (toHead), the same as HTTP/1.1's; Node's, well above it, only keeps what it buffers finite. Over
    // Node's (or over the bytes) it resets the stream, with ENHANCE_YOUR_CALM read below as a head too large.
    maxHeaderListPairs: 4 * MAX_RESPONSE_HEADER_FIELDS,
  });
  // An exchange hears the session's errors through its own listener; between
  // exchanges (a kept session) one must not go unheard, or it would be thrown.
  session.on("error", () => undefined);
  return session;
}

/**
 * One HTTP/2 request, a new stream on the session. Same contract as the
 * HTTP/1.1 exchange: interim responses skipped within the same bounds, a
 * bounded body prefix when asked. The stream is closed once the hop has what
 * it needs (a cancelled stream leaves the session usable); the session is
 * left to the caller.
 */
export function exchangeHttp2(session: ClientHttp2Session, request: ExchangeRequest): Promise<Exchanged> {
  return new Promise((resolve, reject) => {
    const { url } = request;
    let settled = false;
    let final: { head: ResponseHead; headAt: number } | null = null;
    const parts: Uint8Array[] = [];
    let kept = 0;
    let interim = 0;
    let open: ClientHttp2Stream | null = null;

    const done = () => {
      request.signal.removeEventListener("abort", onAbort);
      session.off("error", onSessionError);
      if (open !== null && !open.destroyed) open.close(constants.NGHTTP2_CANCEL);
    };
    const succeed = () => {
      if (settled || final === null) return;
      settled = true;
      done();
      resolve({
        head: final.head,
        httpVersion: "2",
        headAt: final.headAt,
        bodyPrefix: request.bodyPrefixBytes > 0 ? joinBytes(parts, kept) : null,
        drain: null,
      });
    };
    const fail = (error: unknown) => {
      if (settled) return;
      if (final !== null) return succeed();
      settled = true;
      done();
      reject(error);
    };
    // Every listener goes through guarded(): what one throws ends this exchange as an InternalProbeError, never the thread.
    const defect = (error: unknown) => {
      if (settled) return;
      settled = true;
      done();
      reject(error);
    };
    const onAbort = guarded(
      () => (final !== null ? succeed() : fail(new ProbeProtocolError("ABORTED", "the hop's deadline passed"))),
      defect,
    );

    // A GOAWAY before our stream was answered surfaces as the stream's close or error.
    const onSessionError = guarded((error: unknown) => fail(sessionError(error)), defect);
    session.on("error", onSessionError);

    // Our own names, but a map all the same: made by definition (fromEntries), never by assignment to a {}.
    const pseudo: [string, string][] = [
      [":method", request.method],
      [":path", `${url.pathname}${url.search}`],
      [":scheme", "https"],
      [":authority", url.host],
    ];
    const headers: Record<string, string> = Object.fromEntries([...pseudo, ...request.headers]);
    let stream: ClientHttp2Stream;
    try {
      // A kept session the server has since closed refuses a new stream at once: no request went out.
      stream = session.request(headers, { endStream: true });
    } catch (error) {
      return fail(
        new ProbeProtocolError(
          "CONNECTION_CLOSED",
          `the connection could not carry the request: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
    }
    open = stream;
    request.trace.requestSentAt = now();

    // Node emits "headers" on a client stream only for interim (1xx) responses.
    stream.on(
      "headers",
      guarded(() => {
        request.trace.firstByteAt ??= now();
        interim++;
        if (interim > MAX_INTERIM_RESPONSES)
          fail(new ProbeProtocolError("TOO_MANY_INTERIM_RESPONSES", `more than ${MAX_INTERIM_RESPONSES} interim responses`));
      }, defect),
    );
    stream.on(
      "response",
      guarded((responseHeaders: IncomingHttpHeaders & IncomingHttpStatusHeader, _flags: number, rawHeaders: unknown) => {
        request.trace.firstByteAt ??= now();
        const head = toHead(responseHeaders, rawHeaders, request.captureHead);
        if (head === null) return fail(headTooLarge());
        final = { head, headAt: now() };
        const wanted = hasNoBody(request.method, final.head.status) ? 0 : request.bodyPrefixBytes;
        if (wanted === 0) succeed();
      }, defect),
    );
    stream.on(
      "data",
      guarded((chunk: Buffer) => {
        if (final === null || settled) return;
        const take = Math.min(chunk.length, request.bodyPrefixBytes - kept);
        if (take > 0) {
          parts.push(Uint8Array.prototype.slice.call(chunk, 0, take));
          kept += take;
        }
        if (kept >= request.bodyPrefixBytes) succeed();
      }, defect),
    );
    stream.on(
      "end",
      guarded(() => succeed(), defect),
    );
    stream.on(
      "error",
      guarded(
        (error: unknown) => fail(stream.rstCode === constants.NGHTTP2_ENHANCE_YOUR_CALM ? headTooLarge() : sessionError(error)),
        defect,
      ),
    );
    stream.on(
      "close",
      guarded(() => {
        if (final !== null) return succeed();
        const code = stream.rstCode;
        fail(
          code === undefined || code === constants.NGHTTP2_NO_ERROR || code === constants.NGHTTP2_CANCEL
            ? new ProbeProtocolError("CONNECTION_CLOSED", "the stream closed before a response")
            : code === constants.NGHTTP2_ENHANCE_YOUR_CALM
              ? headTooLarge()
              : new ProbeProtocolError("HTTP2_STREAM_ERROR", `the server reset the stream (code ${code})`),
        );
      }, defect),
    );

    if (request.signal.aborted) return onAbort();
    request.signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The head as the server sent it. Node's header object keeps only the first
 * of a repeated single-value field (location, content-type, ...), so two
 * different Locations would never be seen; the raw list Node passes with the
 * 'response' event (name, value, name, value, ...: the listener's third
 * argument, which onSessionHeaders in lib/internal/http2/core.js has passed
 * since Node 10, so on 20, 22 and 24; the newer docs name it) has every field, in
 * order, and the HTTP/1.1 rule then applies as it is (hop.ts). Without it,
 * the object's fields, as before. Null past MAX_RESPONSE_HEADER_FIELDS fields.
 */
function toHead(headers: IncomingHttpHeaders & IncomingHttpStatusHeader, rawHeaders: unknown, keepSentNames: boolean): ResponseHead | null {
  const fields: [string, string][] = [];
  // HTTP/2 field names are lower-case on the wire; kept as sent all the same, when details ask.
  const sentNames: string[] | null = keepSentNames && Array.isArray(rawHeaders) ? [] : null;
  if (Array.isArray(rawHeaders)) {
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name: unknown = rawHeaders[i];
      const value: unknown = rawHeaders[i + 1];
      if (typeof name !== "string" || name.startsWith(":")) continue;
      sentNames?.push(name);
      fields.push([name.toLowerCase(), String(value)]);
      if (fields.length > MAX_RESPONSE_HEADER_FIELDS) return null;
    }
  } else {
    for (const [name, value] of Object.entries(headers)) {
      if (name.startsWith(":") || value === undefined) continue;
      if (Array.isArray(value)) for (const each of value) fields.push([name, each]);
      else fields.push([name, String(value)]);
    }
    if (fields.length > MAX_RESPONSE_HEADER_FIELDS) return null;
  }
  // HTTP/2 has no reason phrase; the hop supplies the standard one.
  const head = { version: "2" as const, status: Number(headers[":status"] ?? 0), statusText: "", fields };
  return sentNames === null ? head : Object.assign(head, { sentNames });
}

/**
 * A head past MAX_RESPONSE_HEADER_FIELDS fields (counted in toHead), or one
 * Node reset with ENHANCE_YOUR_CALM because its header list passed
 * maxHeaderListPairs or the maxHeaderListSize we offered: too large, as over HTTP/1.1. (A server sending that code itself on our
 * one request reads the same; no server has a reason to.)
 */
function headTooLarge(): ProbeProtocolError {
  return new ProbeProtocolError(
    "RESPONSE_HEAD_TOO_LARGE",
    `the response head passed ${MAX_RESPONSE_HEADER_FIELDS} fields or the offered header list size`,
  );
}

/** Node's HTTP/2 errors, named by what they mean for the hop. */
function sessionError(error: unknown): unknown {
  const code = typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : "";
  if (SOCKET_GONE.has(code)) return error;
  if (code === "ERR_HTTP2_STREAM_ERROR") return new ProbeProtocolError("HTTP2_STREAM_ERROR", error instanceof Error ? error.message : code);
  return new ProbeProtocolError("HTTP2_PROTOCOL_ERROR", error instanceof Error ? error.message : code || "unknown HTTP/2 failure");
}
