import { randomUUID } from "node:crypto";
import { API_KEY_QUERY_PARAMETER } from "../shared/credential-names.js";

/** What replaces a secret in anything logged. */
export const REDACTED = "[REDACTED]";

// Relative request targets are parsed against this; it never leaves this file.
const PLACEHOLDER_ORIGIN = "http://placeholder.invalid";
const ASSUMED_SCHEME = "http://";

/**
 * A request target ("/api/v1/is-site-down?url=...&api_key=...") or absolute
 * URL made safe to log: the api_key parameter's value is replaced, userinfo
 * is removed, and every other parameter value goes through redactValue,
 * since the `url` of a diagnostic may carry credentials or a key of its own.
 * A target that cannot be parsed keeps only its path, never its query.
 */
export function redactUrl(target: string): string {
  let parsed: URL;
  try {
    parsed = new URL(target, PLACEHOLDER_ORIGIN);
  } catch {
    return target.split("?", 1)[0] ?? "";
  }
  const absolute = !target.startsWith("/");
  parsed.username = "";
  parsed.password = "";
  const query = new URLSearchParams();
  for (const [name, value] of parsed.searchParams) {
    query.append(name, name.toLowerCase() === API_KEY_QUERY_PARAMETER ? REDACTED : redactValue(value));
  }
  const search = query.size > 0 ? `?${query.toString()}` : "";
  // The fragment is dropped: it never reaches a server, so it can only add what should not be logged.
  return absolute ? `${parsed.origin}${parsed.pathname}${search}` : `${parsed.pathname}${search}`;
}

/**
 * A query value made safe to log. Whatever a URL parser could read as a user
 * or password is removed, however it is spelled: with or without a scheme,
 * with leading spaces, tabs or newlines inside (the WHATWG parser drops
 * them), backslashes for slashes, extra or missing slashes ("//u:p@host",
 * "http:u:p@host"); that is at least everything the service's own reading
 * of `url` would take as credentials. An api_key inside it is replaced.
 * In a value no parser reads, anything shaped like `user:pass@` or `user@`
 * is replaced, since a person may still recognise it as credentials.
 */
export function redactValue(value: string): string {
  const read = readAsUrl(value);
  if (read === undefined) return value.replace(USERINFO_LIKE, `${REDACTED}@`);
  const { url, assumedScheme } = read;
  const hasKey = [...url.searchParams.keys()].some((name) => name.toLowerCase() === API_KEY_QUERY_PARAMETER);
  if (url.username === "" && url.password === "" && !hasKey) {
    // A value the parser reads without credentials can still hide some from it (an @ it took as part of a path).
    return value.replace(USERINFO_LIKE, `${REDACTED}@`);
  }
  url.username = "";
  url.password = "";
  if (hasKey) {
    for (const name of [...url.searchParams.keys()])
      if (name.toLowerCase() === API_KEY_QUERY_PARAMETER) url.searchParams.set(name, REDACTED);
  }
  url.hash = "";
  return assumedScheme ? url.href.slice(ASSUMED_SCHEME.length) : url.href;
}

/**
 * A run of characters a host or path would end, followed by `@`. Tried only
 * where such a run starts (the lookbehind): without it every position inside
 * a long run without an `@` rescanned the run to its end, quadratic in a
 * caller's 16 KiB query value: the main thread held per logged request (docs/benchmarks.md).
 */
const USERINFO_LIKE = /(?<![^\s/\\?#@])[^\s/\\?#@]+@/g;

/** The value as a URL, as given or (like a bare domain) with a scheme in front; undefined when neither parses. */
function readAsUrl(value: string): { readonly url: URL; readonly assumedScheme: boolean } | undefined {
  try {
    const url = new URL(value);
    // "host:8080/x" and "user:pw@host" parse as a scheme of their own; only a web URL says where credentials are.
    if (url.protocol === "http:" || url.protocol === "https:") return { url, assumedScheme: false };
  } catch {
    // Not absolute: try it as the bare domain the diagnostics accept.
  }
  try {
    return { url: new URL(`${ASSUMED_SCHEME}${value.trim()}`), assumedScheme: true };
  } catch {
    return undefined;
  }
}

/** The host (name or address, with no port, user or path) of a URL the caller gave; null when there is none. */
export function hostOf(input: string): string | null {
  const text = input.trim();
  if (text === "") return null;
  // A bare "example.com/path" (the diagnostics accept it) only parses with a scheme in front.
  const candidate = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  try {
    const host = new URL(candidate).hostname;
    if (host !== "") return host;
  } catch {
    // Not a URL: there is no host to report.
  }
  return null;
}

/** The header that carries a request's id in, and back out on every door. */
export const REQUEST_ID_HEADER = "x-request-id";

// Ids from load balancers and tracing (UUIDs, ULIDs, "Root=1-5e..."): short, printable, no spaces or quotes.
const SANE_ID = /^[A-Za-z0-9][A-Za-z0-9._:=+/-]{0,127}$/;

/**
 * The id of one request: the caller's own x-request-id when it is one value
 * that is safe to log and echo (so a trace spans the caller's systems and
 * ours), otherwise a fresh UUID. A rejected id is dropped, never repaired:
 * it could be an attempt to forge log lines.
 */
export function requestIdFrom(header: string | readonly string[] | undefined): string {
  if (typeof header === "string" && SANE_ID.test(header)) return header;
  return randomUUID();
}
