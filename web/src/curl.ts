import type { Operation } from "./service.js";

const PATHS: Readonly<Record<Operation, string>> = { check: "/api/v1/is-site-down", trace: "/api/v1/redirect-check" };

/**
 * The REST call equal to what the page just did, for a terminal: the key as
 * `$KEY` (never the key itself), in the header rather than the query.
 */
export function curlCommand(origin: string, operation: Operation, url: string, everywhere = false, userAgent = "browser"): string {
  const query = new URLSearchParams(everywhere ? { url, details: "true", vantages: "all" } : { url, details: "true" });
  if (userAgent !== "browser") query.set("user_agent", userAgent);
  return `curl -H "x-api-key: $KEY" ${shellQuoted(`${origin}${PATHS[operation]}?${query.toString()}`)}`;
}

/** Single-quoted for a POSIX shell: nothing inside is expanded. */
function shellQuoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
