import { API_KEY_QUERY_PARAMETER } from "../access/api-key.js";

/** What replaces a secret in anything logged. */
export const REDACTED = "[REDACTED]";

// Relative request targets are parsed against this; it never leaves this file.
const PLACEHOLDER_ORIGIN = "http://placeholder.invalid";

/**
 * A request target ("/api/v1/is-site-down?url=...&api_key=...") or absolute
 * URL made safe to log: the api_key parameter's value is replaced, userinfo
 * is removed, and a parameter whose value is itself a URL (the `url` of a
 * diagnostic) gets the same treatment, since a target URL may carry
 * credentials or a key of its own. A target that cannot be parsed keeps only
 * its path, never its query.
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
    query.append(name, name.toLowerCase() === API_KEY_QUERY_PARAMETER ? REDACTED : redactNestedUrl(value));
  }
  const search = query.size > 0 ? `?${query.toString()}` : "";
  // The fragment is dropped: it never reaches a server, so it can only add what should not be logged.
  return absolute ? `${parsed.origin}${parsed.pathname}${search}` : `${parsed.pathname}${search}`;
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

/** A parameter value that is a URL, with or without its scheme ("user:pw@host/path"), without its userinfo or key. */
function redactNestedUrl(value: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return redactUrl(value);
  const authority = value.split(/[/?#]/, 1)[0] ?? "";
  const stripped = authority.includes("@") ? value.slice(authority.lastIndexOf("@") + 1) : value;
  return stripped.includes("?") ? redactUrl(`http://${stripped}`).slice("http://".length) : stripped;
}
