import { pathOf } from "./route-table.js";

/**
 * A request's target (path and query, as the request line carried it), read
 * once where the request arrives and handed on in its Arrival: the observer
 * names the route from its path, the handler routes by it, and the REST door
 * reads its parameters from the query, none of them parsing it again.
 */
export interface RequestTarget {
  /** As sent, for the log line (redacted there). */
  readonly raw: string;
  /** Up to the first "?": what routes the request. */
  readonly path: string;
  /** The query's parameters, parsed when first read (only the REST door reads them). */
  readonly query: URLSearchParams;
}

export function requestTargetOf(raw: string): RequestTarget {
  let query: URLSearchParams | undefined;
  return {
    raw,
    path: pathOf(raw),
    // As WHATWG URL reads a target against a base: what the REST door always read its parameters with.
    get query() {
      query ??= new URL(raw, "http://localhost").searchParams;
      return query;
    },
  };
}
