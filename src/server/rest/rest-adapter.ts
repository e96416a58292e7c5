import type { DescMethodServerStreaming, DescMethodUnary, Message } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues } from "@connectrpc/connect";
import { API_KEY_HEADER, API_KEY_QUERY_PARAMETER as API_KEY_PARAMETER } from "../../access/api-key.js";
import { BATCH } from "../../limits.js";
import { inputProblemKey } from "../../service/diagnostics-service.js";
import { type Admission, releaseWithAnswer } from "../admission/admission.js";
import { callContextValues } from "../observers/call-record.js";
import { applicationHeadersOf, copyApplicationHeaders, isApplicationHeader } from "./forwarded-headers.js";
import { type NodeRequest, sendJson, type NodeResponse, setHeadersOn } from "../json-response.js";
import { errorBody, errorBodyOf, httpStatusOf, metaFor, successBody } from "./rest-envelope.js";
import { messageFromQuery } from "./rest-query.js";
import type { LocalCalls } from "./local-calls.js";
import { renderMessage, RestRenderError } from "./rest-render.js";
import type { RestRoute } from "./rest-routes.js";
import { messageFromBody } from "./rest-body.js";
import { batchLine } from "./rest-ndjson.js";

const HEADER_SAFE = /^[\x21-\x7e]+$/;

export type { NodeRequest } from "../json-response.js";

/** Serves one request of a REST route; `headers` are added to whatever it answers (CORS). */
export type RestAdapter = (route: RestRoute, request: NodeRequest, response: NodeResponse, headers: Headers) => Promise<void>;

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
  return async (route, request, response, headers) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const meta = metaFor(route.tool);
    const keys = url.searchParams.getAll(API_KEY_PARAMETER);
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

    const admitted = admission === undefined ? undefined : await admission.admit(request, "rest", route.method.name, presented, route.streaming ? BATCH.concurrency : 1);
    if (admitted !== undefined && !admitted.ok) {
      sendJson(response, httpStatusOf(admitted.error.code), errorBodyOf(admitted.error, meta), copyApplicationHeaders(admitted.error.metadata, headers));
      return;
    }
    if (admitted !== undefined) releaseWithAnswer(response, admitted.release);
    try {
      const contextValues = callContextValues(request, "rest");
      let input: Message;
      if (route.verb === "GET") {
        const { message, problem } = messageFromQuery(route.method.input, url.searchParams, [API_KEY_PARAMETER]);
        // A bad parameter is rejected by the service after the charge, as the contract has it.
        if (problem !== undefined) contextValues.set(inputProblemKey, problem);
        input = message;
      } else {
        // A body that is no request has no price to charge: refused here, nothing charged.
        const body = await messageFromBody(route.method.input, request, options.maxRequestBytes);
        if (!body.ok) return sendJson(response, body.status, errorBody(body.code, body.message, meta), headers);
        input = body.message;
      }
      const call: RestCall = { calls, route, request, response, headers, callHeaders, contextValues, input, meta, onDefect };
      await (route.streaming ? streamAndAnswer(call) : callAndAnswer(call));
    } finally {
      // Over once the adapter is: whatever it answered is written, or its client is gone.
      admitted?.release();
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
  readonly meta: ReturnType<typeof metaFor>;
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

async function callAndAnswer({ calls, route, response, headers, callHeaders, contextValues, input, meta, onDefect }: RestCall): Promise<void> {
  const { controller, clientGone } = callController(response);
  try {
    const answer = await calls.call(route.method as DescMethodUnary, input, { controller, header: callHeaders, contextValues });
    const data = renderMessage(route.method.output, answer.message);
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
async function streamAndAnswer({ calls, route, response, headers, callHeaders, contextValues, input, meta, onDefect }: RestCall): Promise<void> {
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
