import { createHash } from "node:crypto";
import { type Cookie, CookieJar, MemoryCookieStore } from "tough-cookie";
import { CHECK_COOKIES } from "../shared/limits.js";
import type { HopResponse } from "../probe/hop-types.js";

/**
 * The cookies of one check, as a browser keeps them for one navigation: a
 * site that sets a cookie and redirects to itself expecting it back works in
 * every browser and in `curl -L -b ''`. RFC 6265 matching (domain, path,
 * secure, expiry, public suffixes) is tough-cookie's. The jar lives exactly as
 * long as the check, so nothing is shared between checks or callers, and its
 * values go only into the next requests' Cookie header: never into a result,
 * a warning or a log line.
 *
 * A site's Set-Cookie lines are its own to write, so the jar is bounded as a
 * browser's is (CHECK_COOKIES): lines read per response, bytes per cookie,
 * cookies per domain and in all (the least recently used evicted first,
 * RFC 6265 5.3), and bytes per Cookie header.
 */
export interface CheckCookies {
  /** The Cookie header for a request to `url`; undefined when the jar has none for it. */
  header(url: URL): string | undefined;
  /** Stores what a response set (Set-Cookie), as received from `url`; a cookie the rules refuse is dropped. */
  take(url: URL, response: HopResponse): void;
}

export function createCheckCookies(): CheckCookies {
  // Made at the first Set-Cookie: most checks never see one, and a jar and its
  // matching on every hop were a measurable part of a check's CPU.
  let jar: { readonly cookies: CookieJar; readonly store: MemoryCookieStore } | undefined;
  return {
    header(url) {
      if (jar === undefined) return undefined;
      try {
        return headerOf(jar.cookies.getCookiesSync(url.href));
      } catch {
        // tough-cookie throws for no URL we send; a jar that cannot answer sends no cookies.
        return undefined;
      }
    },
    take(url, response) {
      const lines = setCookieLines(response.headers);
      if (lines.length === 0) return;
      if (jar === undefined) {
        const store = new MemoryCookieStore();
        jar = { cookies: new CookieJar(store), store };
      }
      const count = Math.min(lines.length, CHECK_COOKIES.maxSetCookieLines);
      for (let index = 0; index < count; index++) {
        const line = lines[index] ?? "";
        if (pairBytes(line) > CHECK_COOKIES.maxCookieBytes) continue;
        try {
          jar.cookies.setCookieSync(line, url.href, { ignoreError: true });
        } catch {
          // A line the parser cannot take is dropped, as a browser drops it.
        }
      }
      evict(jar.store, Date.now());
    },
  };
}

/**
 * What the loop detection keys a request's cookies by: a digest, so the key
 * is small and holds no cookie text (a site's values are never copied into
 * anything that outlives the request). Empty without cookies.
 */
export function cookieKey(header: string | undefined): string {
  if (header === undefined) return "";
  // 128 bits of SHA-256: a collision would only end the site's own trace early.
  return createHash("sha256").update(header, "latin1").digest("base64url").slice(0, 22);
}

/** The one place a response's Set-Cookie fields are read. */
function setCookieLines(headers: HopResponse["headers"]): readonly string[] {
  const set = headers["set-cookie"];
  if (set === undefined) return [];
  return typeof set === "string" ? [set] : set;
}

/**
 * The name and value's length together (RFC 6265bis 5.6: each trimmed of
 * spaces and tabs, the pair ends at the first ';', the name at the first '='),
 * counted in place without copying the line. Header text is latin1: a char is an octet.
 */
function pairBytes(line: string): number {
  if (line.length <= CHECK_COOKIES.maxCookieBytes) return line.length;
  const semicolon = line.indexOf(";");
  const end = semicolon === -1 ? line.length : semicolon;
  const equals = line.indexOf("=");
  if (equals === -1 || equals > end) return trimmedLength(line, 0, end);
  return trimmedLength(line, 0, equals) + trimmedLength(line, equals + 1, end);
}

function trimmedLength(text: string, start: number, end: number): number {
  let from = start;
  let to = end;
  while (from < to && isBlank(text.charCodeAt(from))) from++;
  while (to > from && isBlank(text.charCodeAt(to - 1))) to--;
  return to - from;
}

function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/** The Cookie header for these cookies, in RFC 6265's order, leaving out any that would take it past its bound. */
function headerOf(cookies: readonly Cookie[]): string | undefined {
  let header = "";
  for (const cookie of cookies) {
    const pair = cookie.cookieString();
    if (header === "") {
      if (pair.length <= CHECK_COOKIES.maxHeaderBytes) header = pair;
    } else if (header.length + 2 + pair.length <= CHECK_COOKIES.maxHeaderBytes) {
      header = `${header}; ${pair}`;
    }
  }
  return header === "" ? undefined : header;
}

/**
 * RFC 6265 5.3's eviction, once per response: expired cookies first, then the
 * least recently used of a domain past its bound, then the least recently
 * used of all past the total. A jar of at most a few hundred cookies, so a
 * sort per response is cheap.
 */
function evict(store: MemoryCookieStore, now: number): void {
  const all = allCookies(store);
  if (all.length <= CHECK_COOKIES.perDomain && all.every((cookie) => !expired(cookie, now))) return;
  const live: Cookie[] = [];
  const byDomain = new Map<string, Cookie[]>();
  for (const cookie of all) {
    if (expired(cookie, now)) {
      remove(store, cookie);
      continue;
    }
    const domain = cookie.domain ?? "";
    const group = byDomain.get(domain);
    if (group === undefined) byDomain.set(domain, [cookie]);
    else group.push(cookie);
  }
  for (const group of byDomain.values()) {
    group.sort(leastRecentFirst);
    const over = group.length - CHECK_COOKIES.perDomain;
    for (let index = 0; index < group.length; index++) {
      const cookie = group[index] as Cookie;
      if (index < over) remove(store, cookie);
      else live.push(cookie);
    }
  }
  if (live.length <= CHECK_COOKIES.total) return;
  live.sort(leastRecentFirst);
  for (const cookie of live.slice(0, live.length - CHECK_COOKIES.total)) remove(store, cookie);
}

function allCookies(store: MemoryCookieStore): readonly Cookie[] {
  // The memory store answers its callbacks synchronously (CookieJar's *Sync methods rely on it).
  let found: readonly Cookie[] = [];
  void store.getAllCookies((error, cookies) => {
    if (error === null && cookies !== undefined) found = cookies;
  });
  return found;
}

function remove(store: MemoryCookieStore, cookie: Cookie): void {
  if (cookie.domain === null || cookie.path === null) return;
  void store.removeCookie(cookie.domain, cookie.path, cookie.key, () => undefined);
}

function expired(cookie: Cookie, now: number): boolean {
  const expiry = cookie.expiryTime();
  return expiry !== undefined && expiry <= now;
}

/** Earliest last access first (RFC 6265 5.3); among equals, the earliest created (tough-cookie's creation index). */
function leastRecentFirst(a: Cookie, b: Cookie): number {
  return accessedAt(a) - accessedAt(b) || a.creationIndex - b.creationIndex;
}

function accessedAt(cookie: Cookie): number {
  const at = cookie.lastAccessed ?? cookie.creation;
  return at instanceof Date ? at.getTime() : 0;
}
