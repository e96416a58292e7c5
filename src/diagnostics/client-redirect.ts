/**
 * Client-side redirects the contract does not follow (spec 4.2.4), read so
 * they can be reported: a `Refresh` response header, or a
 * `<meta http-equiv="refresh">` in the start of an HTML body. Pure functions;
 * the caller bounds the bytes (MAX_CLIENT_REDIRECT_BODY_BYTES) before any parsing.
 */
import type { ResponseHeaders } from "./proxy-signatures.js";
import type { ClientRedirect } from "./diagnostic-details.js";
import { metaRefreshContent } from "./meta-refresh-scan.js";

export { metaRefreshContent } from "./meta-refresh-scan.js";

/** How much of an HTML body is searched for a meta refresh. */
export const MAX_CLIENT_REDIRECT_BODY_BYTES = 64 * 1024;

/** Longest Refresh value read; anything longer is not a refresh a browser would act on in practice. */
const MAX_REFRESH_VALUE = 4096;

/**
 * The redirect a response asks the browser to make by itself, or null. The
 * header wins over the markup, as in browsers, which act on the header
 * before parsing the document. Only a 2xx HTML body is searched.
 */
export function clientRedirectOf(
  status: number,
  headers: ResponseHeaders,
  body: Uint8Array | null,
  pageUrl: string,
): ClientRedirect | null {
  const header = firstValue(headers["refresh"]);
  if (header !== null) {
    const parsed = parseRefresh(header, pageUrl);
    if (parsed !== null) return { kind: "refresh_header", ...parsed };
  }
  if (body === null || status < 200 || status > 299 || !isHtml(headers)) return null;
  const content = metaRefreshContent(new TextDecoder("utf-8", { fatal: false }).decode(body.subarray(0, MAX_CLIENT_REDIRECT_BODY_BYTES)));
  if (content === null) return null;
  const parsed = parseRefresh(content, pageUrl);
  return parsed === null ? null : { kind: "meta_refresh", ...parsed };
}

/**
 * A refresh value as HTML's "shared declarative refresh steps" read it:
 * seconds (a fraction is allowed and ignored), then an optional separator,
 * an optional `url=`, and the URL, optionally quoted. A value without a URL
 * only reloads the page: not a redirect, so null.
 */
export function parseRefresh(value: string, pageUrl: string): { readonly url: string; readonly delaySeconds: number } | null {
  if (value.length > MAX_REFRESH_VALUE) return null;
  let rest = value.replace(/^[\t\n\f\r ]+/, "");
  const time = /^(\d*)(\.[\d.]*)?/.exec(rest);
  const digits = time?.[1] ?? "";
  const fraction = time?.[2] ?? "";
  if (digits === "" && fraction === "") return null;
  const delaySeconds = digits === "" ? 0 : Number.parseInt(digits, 10);
  rest = rest.slice(digits.length + fraction.length);
  // Only whitespace, ';' or ',' may follow the number; anything else is not a refresh.
  if (rest !== "" && !/^[\t\n\f\r ;,]/.test(rest)) return null;
  rest = rest.replace(/^[\t\n\f\r ]*[;,]?[\t\n\f\r ]*/, "");
  const named = /^url[\t\n\f\r ]*=[\t\n\f\r ]*/i.exec(rest);
  if (named !== null) rest = rest.slice(named[0].length);
  const quote = rest[0];
  if (quote === '"' || quote === "'") {
    const end = rest.indexOf(quote, 1);
    rest = end === -1 ? rest.slice(1) : rest.slice(1, end);
  }
  const target = rest.trim();
  if (target === "") return null;
  if (!URL.canParse(target, pageUrl)) return null;
  return { url: new URL(target, pageUrl).href, delaySeconds: Number.isSafeInteger(delaySeconds) ? delaySeconds : Number.MAX_SAFE_INTEGER };
}

function isHtml(headers: ResponseHeaders): boolean {
  const type = firstValue(headers["content-type"]);
  // Without a type browsers sniff; a document that starts like HTML is read as one, so it is searched too.
  if (type === null) return true;
  return /^\s*(?:text\/html|application\/xhtml\+xml)\b/i.test(type);
}

function firstValue(value: string | readonly string[] | undefined): string | null {
  if (value === undefined) return null;
  return typeof value === "string" ? value : (value[0] ?? null);
}
