import { CookieJar } from "tough-cookie";
import type { HopResponse } from "../probe/hop-types.js";

/**
 * The cookies of one check, as a browser keeps them for one navigation: a
 * site that sets a cookie and redirects to itself expecting it back works in
 * every browser and in `curl -L -b ''`. RFC 6265 matching (domain, path,
 * secure, expiry, public suffixes) is tough-cookie's. The jar lives exactly as
 * long as the check, so nothing is shared between checks or callers, and its
 * values go only into the next requests' Cookie header: never into a result,
 * a warning or a log line.
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
  let jar: CookieJar | undefined;
  return {
    header(url) {
      if (jar === undefined) return undefined;
      const value = jar.getCookieStringSync(url.href);
      return value === "" ? undefined : value;
    },
    take(url, response) {
      const set = response.headers["set-cookie"];
      if (set === undefined) return;
      jar ??= new CookieJar();
      for (const line of typeof set === "string" ? [set] : set) jar.setCookieSync(line, url.href, { ignoreError: true });
    },
  };
}
