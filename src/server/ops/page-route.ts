import type { PlainHttpRoute } from "../http-handler.js";
import type { PageFile } from "./page-assets.js";

/**
 * What the page may load and where it may connect: its own origin only (no
 * CDN, no web fonts, no inline script or style), never framed, and no form
 * may navigate anywhere (the page's forms are handled by its script; should
 * it fail to load, a plain submission must not put the key in a URL).
 */
export const PAGE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

// A year, the longest lifetime caches honour; a hashed name never changes its bytes.
const IMMUTABLE = "public, max-age=31536000, immutable";

/** GET / and GET /assets/<hashed name>: the page for people, one route per built file. */
export function pageRoutes(files: readonly PageFile[]): PlainHttpRoute[] {
  return files.map((file) => ({
    path: file.path,
    methods: ["GET", "HEAD"],
    handle: (request, response) => {
      response.setHeader("content-type", file.contentType);
      response.setHeader("content-length", file.body.byteLength);
      // The page names the current hashed assets: it must be fetched anew each time so a new build is seen.
      response.setHeader("cache-control", file.immutable ? IMMUTABLE : "no-store");
      response.setHeader("x-content-type-options", "nosniff");
      if (!file.immutable) {
        response.setHeader("content-security-policy", PAGE_CONTENT_SECURITY_POLICY);
        // The address bar holds the URL being checked: no other site learns it through a Referer.
        response.setHeader("referrer-policy", "no-referrer");
        response.setHeader("cross-origin-opener-policy", "same-origin");
      }
      response.writeHead(200);
      if (request.method === "HEAD") response.end();
      else response.end(file.body);
    },
  }));
}
