/**
 * What a response's header fields tell search engines: `X-Robots-Tag`
 * directives (each field's items, optionally scoped to one crawler:
 * `X-Robots-Tag: googlebot: noindex`) and a canonical URL in `Link`
 * (RFC 8288: `<https://example.com/>; rel="canonical"`). Both read in one
 * forward pass over each value, which the probe already bounded with the head
 * (SITEDIAG_MAX_RESPONSE_HEAD_BYTES).
 */
import { type HeaderMap, headerValue } from "../probe/http/header-map.js";
import { asciiLower } from "./html-scan.js";

/** A noindex the headers give: the directive, and the crawler it is scoped to (null: every crawler). */
export interface HeaderNoindex {
  readonly directive: "noindex" | "none";
  readonly scope: string | null;
}

/** The crawlers whose scoped directives are read: the two sitediag can speak as. Other crawlers' scopes are not theirs. */
export const SCOPED_CRAWLERS: ReadonlySet<string> = new Set(["googlebot", "bingbot"]);
/** Directives that take a value after a colon: not a crawler scope. */
const VALUED_DIRECTIVES: ReadonlySet<string> = new Set(["unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"]);
/** Link URIs longer than this are no canonical a crawler would use (a URL is at most 2,048 characters here). */
const MAX_LINK_URI = 4096;

/** The first noindex (or none) of the X-Robots-Tag fields that applies to every crawler or to one of SCOPED_CRAWLERS; null otherwise. */
export function headerNoindex(headers: HeaderMap): HeaderNoindex | null {
  for (const value of values(headers, "x-robots-tag")) {
    // A scope holds for the items after it in the same field, until another scope.
    let scope: string | null = null;
    for (let from = 0; from <= value.length; ) {
      const comma = value.indexOf(",", from);
      const end = comma === -1 ? value.length : comma;
      let item = value.slice(from, end).trim();
      from = end + 1;
      const colon = item.indexOf(":");
      if (colon !== -1) {
        const head = asciiLower(item.slice(0, colon).trim());
        if (!VALUED_DIRECTIVES.has(head)) {
          scope = head.length > 64 ? "?" : head;
          item = item.slice(colon + 1).trim();
        }
      }
      const directive = item.length > 16 ? "" : asciiLower(item);
      if ((directive === "noindex" || directive === "none") && (scope === null || SCOPED_CRAWLERS.has(scope))) return { directive, scope };
    }
  }
  return null;
}

/**
 * The URI of the first `Link` whose rel holds `canonical`, as written (not
 * resolved), or null. Read as RFC 8288 links: `<uri>` then `;`-separated
 * parameters, quoted strings may hold `,` and `;`; links separated by `,`.
 */
export function headerCanonical(headers: HeaderMap): string | null {
  for (const value of values(headers, "link")) {
    let at = 0;
    while (at < value.length) {
      const open = value.indexOf("<", at);
      if (open === -1) break;
      const close = value.indexOf(">", open + 1);
      if (close === -1) break;
      const uri = value.slice(open + 1, close);
      const params = parameters(value, close + 1);
      at = params.end;
      if (
        uri.length <= MAX_LINK_URI &&
        params.rel !== null &&
        asciiLower(params.rel)
          .split(/[\t ]+/)
          .includes("canonical")
      )
        return uri.trim();
    }
  }
  return null;
}

/** The parameters of one link from `at` to its `,` (outside quotes) or the end: its first rel, and where the next link starts. */
function parameters(value: string, at: number): { readonly rel: string | null; readonly end: number } {
  let rel: string | null = null;
  let index = at;
  while (index < value.length && value[index] !== ",") {
    if (value[index] !== ";") {
      index++;
      continue;
    }
    index++;
    const nameStart = index;
    while (index < value.length && value[index] !== "=" && value[index] !== ";" && value[index] !== ",") index++;
    const name = asciiLower(value.slice(nameStart, Math.min(index, nameStart + 16)).trim());
    if (value[index] !== "=") continue;
    index++;
    while (value[index] === " " || value[index] === "\t") index++;
    let text: string;
    if (value[index] === '"') {
      // A quoted string, with \-escapes, to its closing quote (or the end).
      let out = "";
      index++;
      while (index < value.length && value[index] !== '"') {
        if (value[index] === "\\") index++;
        if (index < value.length && out.length < 256) out += value[index];
        index++;
      }
      index++;
      text = out;
    } else {
      const start = index;
      while (index < value.length && value[index] !== ";" && value[index] !== ",") index++;
      text = value.slice(start, Math.min(index, start + 256)).trim();
    }
    if (name === "rel") rel ??= text;
  }
  return { rel, end: index + 1 };
}

function values(headers: HeaderMap, name: string): readonly string[] {
  const value = headerValue(headers, name);
  return value === undefined ? [] : typeof value === "string" ? [value] : value;
}
