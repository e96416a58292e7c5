import type { NodeRequestHandler } from "./dual-protocol-listener.js";
import { sendJson } from "../json-response.js";
import { errorBody, metaFor } from "../rest/rest-envelope.js";
import { pathOf } from "./request-path.js";

/**
 * Answers 414 with a JSON error for a request target (path and query) longer
 * than `maxBytes`, before any route sees it. Anything shorter reaches its
 * route, where the diagnostic judges the url (a url over MAX_URL_LENGTH is a
 * charged 400 naming its tool, as the contract wants for an invalid url);
 * the cap only bounds what the server holds. The 414 still names the tool
 * the path belongs to (`toolOf`), so a caller sees which operation refused it.
 */
export function limitRequestTarget(handler: NodeRequestHandler, maxBytes: number, toolOf: (path: string) => string | null = () => null): NodeRequestHandler {
  return (request, response) => {
    const target = request.url ?? "/";
    if (Buffer.byteLength(target, "utf8") <= maxBytes) return handler(request, response);
    const message = `the request target is longer than ${maxBytes} bytes`;
    sendJson(response, 414, errorBody("invalid_argument", message, metaFor(toolOf(pathOf(target)))), new Headers({ "access-control-allow-origin": "*" }));
  };
}
