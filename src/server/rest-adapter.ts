import type http from "node:http";
import type http2 from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import { API_KEY_HEADER, API_KEY_QUERY_PARAMETER as API_KEY_PARAMETER } from "../access/api-key.js";
import { inputProblemKey } from "../service/diagnostics-service.js";
import type { Admission } from "./admission.js";
import { callContextValues } from "./door.js";
import { applicationHeadersOf, copyApplicationHeaders } from "./forwarded-headers.js";
import { sendJson, type NodeResponse } from "./json-response.js";
import { errorBody, errorBodyOf, httpStatusOf, metaFor, successBody } from "./rest-envelope.js";
import { messageFromQuery } from "./rest-query.js";
import type { LocalCalls } from "./local-calls.js";
import { renderMessage, RestRenderError } from "./rest-render.js";
import type { RestRoute } from "./rest-routes.js";

const HEADER_SAFE = /^[\x21-\x7e]+$/;

export type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;

/** Serves one GET of a REST route; `headers` are added to whatever it answers (CORS). */
export type RestAdapter = (route: RestRoute, request: NodeRequest, response: NodeResponse, headers: Headers) => Promise<void>;

/**
 * The REST door: turns a GET with query parameters into the route's request
 * message, calls the RPC in memory through the same implementation and
 * interceptors the RPC doors use (no serialising in between), and wraps the
 * answer in the envelope. Application headers flow
 * through in both directions: x-api-key in (or api_key from the query when
 * the header is absent), usage headers and Retry-After out, from successes
 * and from errors' metadata alike.
 */
export function createRestAdapter(calls: LocalCalls, onDefect: (error: unknown) => void, admission?: Admission): RestAdapter {
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

    const admitted = admission === undefined ? undefined : await admission.admit(request, "rest", route.method.name, presented);
    if (admitted !== undefined && !admitted.ok) {
      sendJson(response, httpStatusOf(admitted.error.code), errorBodyOf(admitted.error, meta), copyApplicationHeaders(admitted.error.metadata, headers));
      return;
    }
    try {
      await callAndAnswer({ calls, route, request, response, headers, callHeaders, query: url.searchParams, meta, onDefect });
    } finally {
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
  readonly query: URLSearchParams;
  readonly meta: ReturnType<typeof metaFor>;
  readonly onDefect: (error: unknown) => void;
}

async function callAndAnswer({ calls, route, request, response, headers, callHeaders, query, meta, onDefect }: RestCall): Promise<void> {
  const { message, problem } = messageFromQuery(route.method.input, query, [API_KEY_PARAMETER]);
  const contextValues = callContextValues(request, "rest");
  if (problem !== undefined) contextValues.set(inputProblemKey, problem);

  const controller = new AbortController();
  let clientGone = false;
  // 'close' also follows every finished response; only a close before the end is a client gone.
  response.once("close", () => {
    if (response.writableFinished) return;
    clientGone = true;
    controller.abort();
  });
  try {
    const answer = await calls.call(route.method, message, { controller, header: callHeaders, contextValues });
    const data = renderMessage(route.method.output, answer.message);
    copyApplicationHeaders(answer.trailer, copyApplicationHeaders(answer.header, headers));
    sendJson(response, 200, successBody(data, meta), headers);
  } catch (reason) {
    if (clientGone) return;
    const error = asConnectError(reason, onDefect);
    copyApplicationHeaders(error.metadata, headers);
    sendJson(response, httpStatusOf(error.code), errorBodyOf(error, meta), headers);
  }
}

function asConnectError(reason: unknown, onDefect: (error: unknown) => void): ConnectError {
  if (reason instanceof RestRenderError) {
    onDefect(reason);
    return new ConnectError("the service could not present its result", Code.Internal, undefined, undefined, reason);
  }
  return ConnectError.from(reason);
}
