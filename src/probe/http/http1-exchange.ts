import type { Socket } from "node:net";
import { bodyDrain, type BodyDrain } from "./body-drain.js";
import { bodyFraming, bodyPrefixReader, type BodyPrefixReader } from "./body-prefix.js";
import {
  hasNoBody,
  isRedirectStatus,
  MAX_INTERIM_RESPONSES,
  MAX_RESPONSE_HEADER_FIELDS,
  type ExchangeRequest,
  type Exchanged,
} from "./exchange-types.js";
import { now } from "../clock.js";
import { guarded, ProbeProtocolError } from "../failure.js";
import { findHeadEnd, parseResponseHead, skipEmptyLines, statusLineStart, TOO_MANY_FIELDS, type ResponseHead } from "./response-head.js";

/**
 * What the head buffer starts at when a head comes in more than one read; it
 * doubles as bytes arrive, never past what the head limit needs.
 */
const INITIAL_BUFFER_BYTES = 4_096;
const NO_BYTES: Buffer = Buffer.alloc(0);

/**
 * One HTTP/1.1 request over a connection the hop owns: write the request,
 * read heads until the final one (skipping interim 1xx responses, bounded in
 * count and bytes), then, when asked, a bounded prefix of the body, and say
 * whether the connection could carry another request. A lean
 * exchange of our own rather than a general client: the hop asks one thing
 * and reads one head, and browsers accept heads (bare LF, an unasked 100)
 * that llhttp's strict mode refuses. The caller keeps or destroys the socket.
 */
export function exchangeHttp1(socket: Socket, request: ExchangeRequest): Promise<Exchanged> {
  return new Promise((resolve, reject) => {
    // The first read is read in place: nearly every head comes whole in one,
    // and copying it cost a 4 KiB allocation of its own per request (an
    // ArrayBuffer outside Node's pool). Node gives each read its own bytes.
    let buffer = NO_BYTES;
    let borrowed = false;
    let length = 0;
    let headStart = 0;
    let scanFrom = 0;
    let interim = 0;
    let final: { head: ResponseHead; headAt: number; reader: BodyPrefixReader } | null = null;
    /** Every body byte received goes through it too, read or not: a kept connection drains the rest. Null: not keepable. */
    let drain: BodyDrain | null = null;
    let settled = false;

    const cleanup = () => {
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("close", onEnd);
      socket.off("error", onError);
      request.signal.removeEventListener("abort", onAbort);
    };
    /** `open`: the connection is still in step (not ended, not failed), so it may be kept. */
    const succeed = (open: boolean) => {
      if (settled || final === null) return;
      settled = true;
      cleanup();
      const keepable = open && drain !== null && drain.state() !== "broken" ? drain : null;
      // Paused so that no byte arrives unheard between here and whoever keeps the connection.
      if (keepable !== null) socket.pause();
      resolve({
        head: final.head,
        httpVersion: final.head.version,
        headAt: final.headAt,
        bodyPrefix: request.bodyPrefixBytes > 0 ? final.reader.result() : null,
        drain: keepable,
      });
    };
    const fail = (error: unknown) => {
      if (settled) return;
      // Once the head is in, a broken body only ends the prefix early.
      if (final !== null) return succeed(false);
      settled = true;
      cleanup();
      reject(error);
    };

    const append = (chunk: Buffer) => {
      if (length === 0) {
        buffer = chunk;
        borrowed = true;
        length = chunk.length;
        return;
      }
      if (borrowed || length + chunk.length > buffer.length) {
        const size = Math.max(Math.min(INITIAL_BUFFER_BYTES, request.maxHeadBytes + 1), buffer.length * 2, length + chunk.length);
        const grown = Buffer.allocUnsafe(size);
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
        borrowed = false;
      }
      chunk.copy(buffer, length);
      length += chunk.length;
    };

    /** Reads every complete head in the buffer; true when the final one is in. */
    const readHeads = (): boolean => {
      for (;;) {
        const view = buffer.subarray(0, length);
        headStart = skipEmptyLines(view, headStart);
        const start = notAStatusLine(view, headStart, false);
        if (start !== undefined) throw start;
        const end = findHeadEnd(view, headStart, scanFrom);
        // Every head so far counts: interim heads cannot be used to stream headers forever.
        if ((end === -1 ? length : end) > request.maxHeadBytes) {
          throw new ProbeProtocolError("RESPONSE_HEAD_TOO_LARGE", `the response head passed ${request.maxHeadBytes} bytes`);
        }
        if (end === -1) {
          scanFrom = length;
          return false;
        }
        const parsed = parseResponseHead(view.subarray(headStart, end), MAX_RESPONSE_HEADER_FIELDS, request.captureHead);
        if (!parsed.ok)
          throw new ProbeProtocolError(parsed.rule === TOO_MANY_FIELDS ? "RESPONSE_HEAD_TOO_LARGE" : "HTTP_PARSE_ERROR", parsed.rule);
        const { head } = parsed;
        headStart = end;
        scanFrom = end;
        if (head.status >= 200) {
          const headAt = now();
          const wanted = hasNoBody(request.method, head.status) ? 0 : request.bodyPrefixBytes;
          const framing = wanted > 0 ? bodyFraming(head.fields) : ({ kind: "length", length: 0 } as const);
          final = { head, headAt, reader: bodyPrefixReader(framing, wanted) };
          // Only a connection the check may ask again on is kept: a redirect's, or any answer's when asked. No other answer pays for a drain.
          drain =
            request.keepAlive && (request.keepAfterAnswer || isRedirectStatus(head.status)) ? keepAliveDrain(head, request.method) : null;
          return true;
        }
        // Nothing here asks to switch protocols, so a 101 is a server speaking out of turn.
        if (head.status === 101) throw new ProbeProtocolError("HTTP_PARSE_ERROR", "an unrequested 101 Switching Protocols");
        interim++;
        if (interim > MAX_INTERIM_RESPONSES) {
          throw new ProbeProtocolError("TOO_MANY_INTERIM_RESPONSES", `more than ${MAX_INTERIM_RESPONSES} interim responses`);
        }
      }
    };

    // Every listener goes through guarded(): what one throws ends this exchange as an InternalProbeError, never the thread.
    const defect = (error: unknown) => {
      if (settled) return;
      settled = true;
      cleanup();
      reject(error);
    };
    const onData = guarded((chunk: Buffer) => {
      request.trace.firstByteAt ??= now();
      if (final !== null) {
        drain?.push(chunk);
        if (final.reader.push(chunk)) succeed(true);
        return;
      }
      append(chunk);
      try {
        if (!readHeads() || final === null) return;
      } catch (error) {
        return fail(error);
      }
      // Whatever followed the head in the buffer is the start of the body.
      const reader = (final as { reader: BodyPrefixReader }).reader;
      drain?.push(buffer.subarray(headStart, length));
      if (reader.push(buffer.subarray(headStart, length))) return succeed(true);
      // The head buffer is not needed any more; the body reader keeps its own bytes.
      buffer = NO_BYTES;
      length = 0;
    }, defect);
    const onEnd = guarded(() => {
      if (final !== null) return succeed(false);
      // A few bytes and the end: what they were is known now (HTTP/0.9's "ok", another protocol's greeting).
      const view = buffer.subarray(0, length);
      const start = notAStatusLine(view, skipEmptyLines(view, headStart), true);
      if (start !== undefined) return fail(start);
      fail(
        new ProbeProtocolError(
          "CONNECTION_CLOSED",
          length === 0 ? "closed before any response byte" : "closed in the middle of the response head",
        ),
      );
    }, defect);
    const onError = guarded((error: unknown) => fail(error), defect);
    const onAbort = guarded(() => {
      if (final !== null) return succeed(false);
      fail(new ProbeProtocolError("ABORTED", "the hop's deadline passed"));
    }, defect);

    if (request.signal.aborted) return onAbort();
    request.signal.addEventListener("abort", onAbort, { once: true });
    socket.on("data", onData);
    socket.on("end", onEnd);
    socket.on("close", onEnd);
    socket.on("error", onError);
    request.trace.requestSentAt = now();
    // A string goes to the socket as it is (latin1, written natively), with no Buffer made for it here.
    socket.write(requestText(request), "latin1");
  });
}

/**
 * How to read the body through when the connection may be kept: the response
 * is HTTP/1.1, the server said keep-alive in so many words (a server that only
 * implies it may serve one request per connection, and a reused connection it
 * ignores would hang), and the body has a known end (none, Content-Length,
 * chunked) within the drain's limit. Null when the connection must be closed.
 */
function keepAliveDrain(head: ResponseHead, method: "GET" | "HEAD"): BodyDrain | null {
  if (head.version !== "1.1") return null;
  let keepAlive = false;
  for (const [name, value] of head.fields) {
    if (name !== "connection") continue;
    for (const token of value.split(",")) {
      const option = token.trim().toLowerCase();
      if (option === "close") return null;
      if (option === "keep-alive") keepAlive = true;
    }
  }
  if (!keepAlive) return null;
  return bodyDrain(hasNoBody(method, head.status) ? { kind: "length", length: 0 } : bodyFraming(head.fields));
}

/** The request: origin-form target, Host first, then our headers, and keep-alive as browsers ask it (a same-origin redirect may reuse it) unless reuse is off. */
function requestText(request: ExchangeRequest): string {
  const { url } = request;
  let text = `${request.method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  for (const [name, value] of request.headers) {
    // Values come from our config and the check's cookie jar; a line break would forge a header.
    if (/[\r\n\0]/.test(value)) continue;
    text += `${name}: ${value}\r\n`;
  }
  text += request.keepAlive ? "connection: keep-alive\r\n\r\n" : "connection: close\r\n\r\n";
  return text;
}

/** The error of an answer that does not begin with a status line, once its first bytes tell; undefined while it may still be one. */
function notAStatusLine(view: Uint8Array, from: number, complete: boolean): ProbeProtocolError | undefined {
  if (from >= view.length) return undefined;
  switch (statusLineStart(view, from, complete)) {
    case "http09_text":
      return new ProbeProtocolError("HTTP_09_RESPONSE", "the answer is text with no status line");
    case "not_http":
      return new ProbeProtocolError("HTTP_PARSE_ERROR", "the answer is another protocol's or not text, not a status line");
    case "status_line":
    case "undecided":
      return undefined;
  }
}
