/**
 * Finds a page's `<meta http-equiv="refresh" content="...">` as a browser
 * would act on it: outside comments and raw text, read by the one linear
 * markup scan (html-scan.ts). The regular expressions this replaced
 * rescanned to the end of the text for every unterminated `<meta`:
 * quadratic, docs/benchmarks.md has what that cost.
 */
import { asciiLower, decodeEntities, scanHtml } from "./html-scan.js";

const META_ATTRIBUTES: ReadonlySet<string> = new Set(["http-equiv", "content"]);

/**
 * The content of the first meta element whose http-equiv is "refresh"
 * (ASCII case-insensitive) and whose content is not empty, outside comments
 * and raw text, with its character references decoded; or null. An empty
 * content is skipped, as HTML's refresh steps skip it.
 */
export function metaRefreshContent(html: string): string | null {
  let found: string | null = null;
  scanHtml(html, {
    attributesOf: (tag) => (tag === "meta" ? META_ATTRIBUTES : null),
    start(tag, attributes) {
      if (tag !== "meta") return false;
      const httpEquiv = attributes.get("http-equiv");
      const content = attributes.get("content");
      if (httpEquiv === undefined || content === undefined || content === "" || !isRefresh(httpEquiv)) return false;
      found = decodeEntities(content);
      return true;
    },
  });
  return found;
}

function isRefresh(httpEquiv: string): boolean {
  // Short of the references a value may use, "refresh" is 7 characters; a longer value is decoded first.
  return asciiLower(httpEquiv.length === 7 ? httpEquiv : httpEquiv.length <= 64 ? decodeEntities(httpEquiv) : "") === "refresh";
}
