/**
 * Header names that belong to a protocol rather than to the application:
 * connection management, framing, encodings, and Connect/gRPC control
 * headers. They are not carried between the REST door and the in-process
 * Connect call in either direction; everything else (x-api-key,
 * x-request-id, usage headers, Retry-After) is.
 */
const PROTOCOL_HEADERS = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "host",
  "content-length",
  "content-type",
  "content-encoding",
  "accept-encoding",
  "http2-settings",
]);
const PROTOCOL_PREFIXES = [":", "connect-", "grpc-", "trailer-"];

export function isApplicationHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return !PROTOCOL_HEADERS.has(lower) && !PROTOCOL_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

/** The application headers of a Node request (arrays joined as Fetch Headers join them). */
export function applicationHeadersOf(raw: Readonly<Record<string, string | string[] | undefined>>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || !isApplicationHeader(name)) continue;
    for (const each of Array.isArray(value) ? value : [value]) headers.append(name, each);
  }
  return headers;
}

/** Copies the application headers of `from` onto `into`, replacing same-named ones. */
export function copyApplicationHeaders(from: Headers, into: Headers): Headers {
  from.forEach((value, name) => {
    if (isApplicationHeader(name)) into.set(name, value);
  });
  return into;
}
