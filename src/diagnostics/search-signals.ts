/**
 * What the final page of a diagnostic tells search engines (issue 39): read
 * from the response the diagnostic already has, its header fields and the
 * bounded body prefix details read (MAX_CLIENT_REDIRECT_BODY_BYTES), never
 * from a request of its own. Total: any page, any bytes, gives a value.
 */
import { MAX_URL_LENGTH } from "../shared/limits.js";
import type { HeaderMap } from "../probe/http/header-map.js";
import { headerValue } from "../probe/http/header-map.js";
import { headerCanonical, headerNoindex } from "./search-headers.js";
import { scanPageMarkup } from "./search-page-scan.js";
import { soft404Phrase } from "./soft-404-words.js";

/** The body read: the prefix the diagnostics already read for a meta refresh (MAX_CLIENT_REDIRECT_BODY_BYTES), never more. */
const MAX_SEARCH_BODY_BYTES = 64 * 1024;

export interface SearchNoindex {
  /** `meta` (a robots meta element) or `header` (X-Robots-Tag). */
  readonly source: "meta" | "header";
  readonly directive: "noindex" | "none";
  /** The crawler it is scoped to: the meta's name (robots, googlebot, bingbot) or the header's scope; null: the header's, for every crawler. */
  readonly scope: string | null;
}

export interface SearchCanonical {
  /** The canonical URL, resolved against the final URL. */
  readonly url: string;
  /** `link_element` (`<link rel="canonical">`) or `link_header` (HTTP `Link`). */
  readonly source: "link_element" | "link_header";
  /** True when it names another URL than the final one (fragments aside). */
  readonly elsewhere: boolean;
}

export interface SearchSoft404 {
  /** `title` or `heading` (the first h1). */
  readonly source: "title" | "heading";
  /** The text as read (at most 200 characters). */
  readonly text: string;
}

export interface SearchSignals {
  readonly noindex: SearchNoindex | null;
  readonly canonical: SearchCanonical | null;
  /** A URL with a path was redirected to a site's root. */
  readonly redirectToHome: boolean;
  /** Only on a final 200. */
  readonly soft404: SearchSoft404 | null;
  /** Whether a body prefix was read (an HTML 2xx body); without one only the header fields and URLs were read. */
  readonly bodyRead: boolean;
}

/** The final answer of a diagnostic, as far as the signals need it. */
export interface FinalPage {
  /** The URL the diagnostic started at (parsed). */
  readonly startUrl: string;
  /** The final URL, where the answer came from. */
  readonly url: string;
  /** How many redirects led there. */
  readonly redirects: number;
  readonly status: number;
  readonly headers: HeaderMap;
  /** The bounded body prefix; null when none was read. */
  readonly body: Uint8Array | null;
}

/** The signals of a final 2xx answer; null for any other status (a 404's noindex tells nothing new). */
export function searchSignals(page: FinalPage): SearchSignals | null {
  if (page.status < 200 || page.status > 299) return null;
  const html =
    page.body !== null && isHtml(page.headers)
      ? new TextDecoder("utf-8", { fatal: false }).decode(page.body.subarray(0, MAX_SEARCH_BODY_BYTES))
      : null;
  const markup = html === null ? null : scanPageMarkup(html);
  const fromMeta = markup?.robots.map((meta) => metaNoindex(meta.name, meta.content)).find((found) => found !== null) ?? null;
  const fromHeader = headerNoindex(page.headers);
  const elementHref = markup?.canonicalHref ?? null;
  const canonical =
    canonicalOf(elementHref, "link_element", page.url) ?? canonicalOf(headerCanonical(page.headers), "link_header", page.url);
  const soft404 = page.status === 200 && markup !== null ? soft404Of(markup.title, markup.heading) : null;
  return {
    noindex: fromMeta ?? (fromHeader === null ? null : { source: "header", directive: fromHeader.directive, scope: fromHeader.scope }),
    canonical,
    redirectToHome: page.redirects > 0 && isRedirectToHome(page.startUrl, page.url),
    soft404,
    bodyRead: html !== null,
  };
}

function metaNoindex(name: string, content: string): SearchNoindex | null {
  for (const item of content.split(",")) {
    const directive = item.trim().toLowerCase();
    if (directive === "noindex" || directive === "none") return { source: "meta", directive, scope: name };
  }
  return null;
}

function canonicalOf(href: string | null, source: SearchCanonical["source"], finalUrl: string): SearchCanonical | null {
  if (href === null || href === "" || href.length > MAX_URL_LENGTH || !URL.canParse(href, finalUrl)) return null;
  const url = new URL(href, finalUrl);
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  url.hash = "";
  const final = new URL(finalUrl);
  final.hash = "";
  return { url: url.href, source, elsewhere: url.href !== final.href };
}

function soft404Of(title: string | null, heading: string | null): SearchSoft404 | null {
  if (title !== null && soft404Phrase(title) !== null) return { source: "title", text: title };
  if (heading !== null && soft404Phrase(heading) !== null) return { source: "heading", text: heading };
  return null;
}

/**
 * A URL with a path (not a site's own home page under another name, such as
 * /index.html) that ended at a root (`/`, no query): the pattern search
 * engines read as a soft 404, whichever site the root is of.
 */
export function isRedirectToHome(startUrl: string, finalUrl: string): boolean {
  if (!URL.canParse(startUrl) || !URL.canParse(finalUrl)) return false;
  const start = new URL(startUrl);
  const final = new URL(finalUrl);
  if (final.pathname !== "/" || final.search !== "") return false;
  let end = start.pathname.length;
  while (end > 0 && start.pathname[end - 1] === "/") end--;
  const path = start.pathname.slice(0, end);
  if (path === "") return false;
  return !/^\/(?:index|default|home)(?:\.[a-z0-9]{1,8})?$/i.test(path);
}

function isHtml(headers: HeaderMap): boolean {
  const value = headerValue(headers, "content-type");
  const type = value === undefined ? null : typeof value === "string" ? value : (value[0] ?? null);
  // Without a type browsers sniff; a body that starts like HTML is read as one, so it is read too.
  if (type === null) return true;
  return /^\s*(?:text\/html|application\/xhtml\+xml)\b/i.test(type.slice(0, 256));
}

/** The warning codes of the search signals, each of severity `warning` (redirect-trace-result.ts). */
export type SearchWarningCode = "noindex" | "canonical_elsewhere" | "redirect_to_home" | "soft_404_suspected";

/** The signals as warnings about the final page (`url`), in a fixed order; none for a clean page. */
export function searchWarningTexts(
  signals: SearchSignals | null,
  url: string,
): { readonly code: SearchWarningCode; readonly message: string }[] {
  if (signals === null) return [];
  const out: { code: SearchWarningCode; message: string }[] = [];
  const { noindex, canonical, soft404 } = signals;
  if (noindex !== null) {
    const where =
      noindex.source === "meta"
        ? `a <meta name="${noindex.scope ?? "robots"}"> element`
        : `X-Robots-Tag${noindex.scope === null ? "" : ` (for ${noindex.scope})`}`;
    out.push({ code: "noindex", message: `${url} asks search engines not to index it: ${noindex.directive} in ${where}` });
  }
  if (canonical?.elsewhere === true) {
    out.push({
      code: "canonical_elsewhere",
      message: `${url} names ${canonical.url} as its canonical URL (${canonical.source === "link_element" ? '<link rel="canonical">' : "Link header"})`,
    });
  }
  if (signals.redirectToHome)
    out.push({
      code: "redirect_to_home",
      message: `The chain ends at the site's root ${url}: search engines treat a deep URL sent to the home page as a soft 404`,
    });
  if (soft404 !== null)
    out.push({
      code: "soft_404_suspected",
      message: `${url} answers 200, but its ${soft404.source === "title" ? "title" : "first heading"} reads ${JSON.stringify(soft404.text)}: a soft 404`,
    });
  return out;
}
