import { isMessage, type JsonObject, type DescMethodServerStreaming, type DescMethodUnary, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues } from "@connectrpc/connect";
import {
  type BatchItemError,
  CheckSiteResponseSchema,
  CheckSitesResponseSchema,
  TraceExpectationSchema,
  TraceRedirectsBatchResponseSchema,
  TraceRedirectsResponseSchema,
} from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { API_KEY_HEADER, API_KEY_QUERY_PARAMETER as API_KEY_PARAMETER } from "../../access/api-key.js";
import { type Admission, type Arrival, callContextValues, takeIn } from "../door/call-intake.js";
import {
  errorBody,
  errorBodyOf,
  httpStatusOf,
  metaFor,
  type NodeRequest,
  type NodeResponse,
  type RestMeta,
  sendJson,
  setHeadersOn,
  successBody,
} from "../door/json-answer.js";
import type { DiagnosticRoute, RestRoute } from "../door/route-table.js";
import { applicationHeadersOf, copyApplicationHeaders, isApplicationHeader } from "./forwarded-headers.js";
import type { LocalCalls } from "./local-calls.js";
import { messageFromBody, messageFromQuery } from "./rest-input.js";
import { renderMessage, RestRenderError } from "./rest-render.js";
import { restData, vantageEvent } from "./vantage-data.js";

const HEADER_SAFE = /^[\x21-\x7e]+$/;

/** Serves one request of a REST route, arrived as `arrival`; `headers` are added to whatever it answers (CORS). */
export type RestAdapter = (
  route: RestRoute,
  diagnostic: DiagnosticRoute,
  request: NodeRequest,
  response: NodeResponse,
  headers: Headers,
  arrival: Arrival,
) => Promise<void>;

export interface RestAdapterOptions {
  readonly calls: LocalCalls;
  readonly onDefect: (error: unknown) => void;
  /** Checked from the headers before anything of the request is read; none lets every call through. */
  readonly admission?: Admission | undefined;
  /** Largest JSON body of a POST route (SITEDIAG_MAX_REQUEST_BYTES). */
  readonly maxRequestBytes: number;
}

/**
 * The REST door: turns a GET's query parameters (or a POST's JSON body) into
 * the route's request message, calls the RPC in memory through the same
 * implementation and interceptors the RPC doors use (no serialising in
 * between), and wraps the answer in the envelope; a streaming RPC answers
 * NDJSON, one envelope per item, each written as it completes. Application
 * headers flow through in both directions: x-api-key in (or api_key from the
 * query when the header is absent), usage headers and Retry-After out, from
 * successes and from errors' metadata alike.
 */
export function createRestAdapter(options: RestAdapterOptions): RestAdapter {
  const { calls, onDefect, admission } = options;
  return async (route, diagnostic, request, response, headers, arrival) => {
    const meta = metaFor(route.tool);
    const keys = arrival.target.query.getAll(API_KEY_PARAMETER);
    if (keys.length > 1) {
      // Which key to charge would be a guess; nothing is charged.
      const message = `query parameter ${API_KEY_PARAMETER} was given ${keys.length} times; give it once`;
      sendJson(response, 400, errorBody("invalid_argument", message, meta), headers);
      return;
    }
    const callHeaders = applicationHeadersOf(request.headers);
    const presented = callHeaders.get(API_KEY_HEADER) ?? keys[0] ?? null;
    // Only visible ASCII travels on as a header: a value with a character
    // beyond Latin-1 (a pasted smart quote, an emoji) cannot be a header at
    // all, and like every other malformed key it is refused as a missing one.
    if (!callHeaders.has(API_KEY_HEADER) && presented !== null && HEADER_SAFE.test(presented)) callHeaders.set(API_KEY_HEADER, presented);
    // A bad parameter goes on the Call: the service rejects it after the charge, as the contract has it.
    const query = route.verb === "GET" ? messageFromQuery(route.method.input, arrival.target.query, [API_KEY_PARAMETER]) : undefined;

    const intake = await takeIn(admission, arrival, response, "rest", diagnostic, presented, query?.problem);
    if (!intake.ok) {
      sendJson(
        response,
        httpStatusOf(intake.error.code),
        errorBodyOf(intake.error, meta),
        copyApplicationHeaders(intake.error.metadata, headers),
      );
      return;
    }
    try {
      let input: Message;
      if (query !== undefined) {
        input = query.message;
      } else {
        // A body that is no request has no price to charge: refused here, nothing charged.
        const body = await messageFromBody(route.method.input, request, options.maxRequestBytes);
        if (!body.ok) return sendJson(response, body.status, errorBody(body.code, body.message, meta), headers);
        input = body.message;
      }
      const call: RestCall = {
        calls,
        route,
        request,
        response,
        headers,
        callHeaders,
        contextValues: callContextValues(intake.call),
        input,
        meta,
        onDefect,
      };
      await (route.streaming ? streamAndAnswer(call) : callAndAnswer(call));
    } finally {
      // Over once the adapter is: whatever it answered is written, or its client is gone.
      intake.release();
    }
  };
}

interface RestCall {
  readonly calls: LocalCalls;
  readonly route: RestRoute;
  readonly request: NodeRequest;
  readonly response: NodeResponse;
  /** Added to whatever is answered (CORS). */
  readonly headers: Headers;
  /** The call's own request headers (x-api-key, x-request-id). */
  readonly callHeaders: Headers;
  readonly contextValues: ContextValues;
  readonly input: Message;
  readonly meta: RestMeta;
  readonly onDefect: (error: unknown) => void;
}

/** The call's controller, aborted when the client goes before the answer is complete. */
function callController(response: NodeResponse): { readonly controller: AbortController; clientGone(): boolean } {
  const controller = new AbortController();
  let gone = false;
  // 'close' also follows every finished response; only a close before the end is a client gone.
  response.once("close", () => {
    if (response.writableFinished) return;
    gone = true;
    controller.abort();
  });
  return { controller, clientGone: () => gone };
}

async function callAndAnswer({
  calls,
  route,
  response,
  headers,
  callHeaders,
  contextValues,
  input,
  meta,
  onDefect,
}: RestCall): Promise<void> {
  const { controller, clientGone } = callController(response);
  try {
    const answer = await calls.call(route.method as DescMethodUnary, input, { controller, header: callHeaders, contextValues });
    const data = restData(route.method.output, answer.message);
    // Straight onto the response, in the order merging them would apply (the answer's over CORS, trailers last):
    // merging into one Headers first validated and sorted each header once more on every call.
    setHeadersOn(response, headers);
    setHeadersOn(response, answer.header, isApplicationHeader);
    setHeadersOn(response, answer.trailer, isApplicationHeader);
    sendJson(response, 200, successBody(data, meta));
  } catch (reason) {
    if (clientGone()) return;
    const error = asConnectError(reason, onDefect);
    copyApplicationHeaders(error.metadata, headers);
    sendJson(response, httpStatusOf(error.code), errorBodyOf(error, meta), headers);
  }
}

/**
 * A streaming call over REST: nothing is written until the first item (or
 * the error that ends the stream before one, such as a 429 for a batch the
 * key cannot afford, answered as a plain JSON error). Then a 200 with the
 * usage headers and one NDJSON line per item, each flushed as it comes; an
 * error after that is the last line, an error envelope with no index.
 */
async function streamAndAnswer({
  calls,
  route,
  response,
  headers,
  callHeaders,
  contextValues,
  input,
  meta,
  onDefect,
}: RestCall): Promise<void> {
  const { controller, clientGone } = callController(response);
  const stream = calls.stream(route.method as DescMethodServerStreaming, input, { controller, header: callHeaders, contextValues });
  const items = stream.messages[Symbol.asyncIterator]();
  let next: IteratorResult<Message>;
  try {
    next = await items.next();
  } catch (reason) {
    if (clientGone()) return;
    const error = asConnectError(reason, onDefect);
    copyApplicationHeaders(error.metadata, copyApplicationHeaders(stream.header, headers));
    return sendJson(response, httpStatusOf(error.code), errorBodyOf(error, meta), headers);
  }
  copyApplicationHeaders(stream.header, headers).forEach((value, name) => response.setHeader(name, value));
  response.setHeader("content-type", "application/x-ndjson; charset=utf-8");
  response.setHeader("cache-control", "no-store");
  response.writeHead(200);
  try {
    for (; next.done !== true; next = await items.next()) {
      if (!writeText(response, `${JSON.stringify(batchLine(next.value, meta))}\n`)) await drained(response);
    }
  } catch (reason) {
    if (clientGone()) return;
    writeText(response, `${JSON.stringify(errorBodyOf(asConnectError(reason, onDefect), meta))}\n`);
  }
  response.end();
}

/**
 * One NDJSON line of a REST batch answer: the documented envelope of the
 * item's operation, with its place in the request beside it. An item with a
 * result is `{"ok": true, "data", "meta", "index", "url"}` (data exactly as
 * the single-URL route's; a trace item adds "expectation", null when none
 * was asked); an item without one is the error envelope with "index" and "url".
 */
function batchLine(item: Message, meta: RestMeta): JsonObject {
  if (isMessage(item, CheckSitesResponseSchema)) {
    const place = { index: item.index, url: item.url };
    if (item.outcome.case === "result")
      return Object.assign({}, successBody(renderMessage(CheckSiteResponseSchema, item.outcome.value), meta), place);
    return Object.assign({}, itemErrorBody(item.outcome.value, meta), place);
  }
  if (isMessage(item, TraceRedirectsBatchResponseSchema)) {
    const place = { index: item.index, url: item.url };
    if (item.outcome.case === "result") {
      const expectation = item.expectation === undefined ? null : renderMessage(TraceExpectationSchema, item.expectation);
      // The chain-length limit the item was held to, only when one was set (issue 39), so an answer without it stays as it was.
      const limit = item.maxRedirects === undefined ? {} : { maxRedirects: item.maxRedirects };
      return Object.assign(
        {},
        successBody(renderMessage(TraceRedirectsResponseSchema, item.outcome.value), meta),
        { expectation },
        limit,
        place,
      );
    }
    return Object.assign(
      {},
      itemErrorBody(item.outcome.value, meta),
      item.maxRedirects === undefined ? {} : { maxRedirects: item.maxRedirects },
      place,
    );
  }
  // A call from several vantages streams its events (an entry, then the verdict), one envelope each.
  const event = vantageEvent(item);
  if (event !== undefined) return successBody(event, meta);
  throw new TypeError(`${item.$typeName} is not a batch item`);
}

/** An item's error envelope; a URL refused at input adds its input_* code to the error (`refusalCode`). */
function itemErrorBody(error: BatchItemError | undefined, meta: RestMeta): JsonObject {
  const body = errorBody(error?.code ?? "internal", error?.message ?? "no result", meta);
  if (error?.refusalCode === undefined) return body;
  return Object.assign({}, body, { error: { code: error.code, message: error.message, refusalCode: error.refusalCode } });
}

/** Both response kinds take a string; their overload sets differ too much for TypeScript to call the union directly. */
function writeText(response: NodeResponse, text: string): boolean {
  const writer: { write(chunk: string): boolean } = response;
  return writer.write(text);
}

function drained(response: NodeResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off("drain", done);
      response.off("close", done);
      resolve();
    };
    response.once("drain", done);
    response.once("close", done);
  });
}

function asConnectError(reason: unknown, onDefect: (error: unknown) => void): ConnectError {
  if (reason instanceof RestRenderError) {
    onDefect(reason);
    return new ConnectError("the service could not present its result", Code.Internal, undefined, undefined, reason);
  }
  return ConnectError.from(reason);
}
