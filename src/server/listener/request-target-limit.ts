import type { NodeRequestHandler } from "./dual-protocol-listener.js";
import { sendJson } from "../json-response.js";
import { errorBody, metaFor } from "../rest/rest-envelope.js";

/**
 * Answers 414 with a JSON error for a request target (path and query) longer
 * than `maxBytes`, before any route sees it. The url parameter is capped at
 * MAX_URL_LENGTH characters; percent-encoding can triple that, and the rest
 * of the query is short, so the default leaves ample room for any valid call.
 */
export function limitRequestTarget(handler: NodeRequestHandler, maxBytes: number): NodeRequestHandler {
  return (request, response) => {
    const target = request.url ?? "/";
    if (Buffer.byteLength(target, "utf8") <= maxBytes) return handler(request, response);
    const message = `the request target is longer than ${maxBytes} bytes`;
    sendJson(response, 414, errorBody("invalid_argument", message, metaFor(null)), new Headers({ "access-control-allow-origin": "*" }));
  };
}
