import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { packageRoot } from "../../package-info.js";
import type { PlainHttpRoute } from "../door/route-table.js";

/** Where `npm run build` writes the page (scripts/build-page.ts), relative to the package root. */
export const PAGE_DIR = join("dist", "web");

/** The folder of hashed files inside the page's directory; their names change whenever their bytes do. */
export const ASSETS_FOLDER = "assets";

export interface PageFile {
  /** Path served, "/" for the page itself, "/assets/app-3KX7.js" for an asset. */
  readonly path: string;
  readonly body: Buffer;
  readonly contentType: string;
  /** True for hashed assets: a given path always has the same bytes, so caches keep it. */
  readonly immutable: boolean;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/** The built page in the package, or undefined when it was not built (the service then runs without it). */
export function builtPageDir(): string | undefined {
  const dir = join(packageRoot(), PAGE_DIR);
  return existsSync(join(dir, "index.html")) ? dir : undefined;
}

/**
 * Every file of a built page, read once at start-up: the set is small (a
 * page, a script, a style sheet, an icon) and fixed until the next build, so
 * nothing is read from disk per request and no request path ever reaches
 * the file system. Files of other kinds are left out, not served.
 */
export function loadPageFiles(dir: string): PageFile[] {
  const files: PageFile[] = [
    { path: "/", body: readFileSync(join(dir, "index.html")), contentType: "text/html; charset=utf-8", immutable: false },
  ];
  const assetsDir = join(dir, ASSETS_FOLDER);
  if (!existsSync(assetsDir)) return files;
  for (const entry of readdirSync(assetsDir, { withFileTypes: true })) {
    const contentType = CONTENT_TYPES[extname(entry.name)];
    if (!entry.isFile() || contentType === undefined) continue;
    files.push({ path: `/${ASSETS_FOLDER}/${entry.name}`, body: readFileSync(join(assetsDir, entry.name)), contentType, immutable: true });
  }
  return files;
}

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
