// The probe keeps a connection only for a redirect, so the one definition of a redirect status lives there.
export { isRedirectStatus } from "../probe/http/exchange-types.js";

/** Redirects that say "this may change": the chain can differ tomorrow. */
const TEMPORARY_STATUSES: ReadonlySet<number> = new Set([302, 303, 307]);

export function isTemporaryRedirect(status: number): boolean {
  return TEMPORARY_STATUSES.has(status);
}

/**
 * The key used to recognise a URL already visited. The WHATWG serialisation
 * already lower-cases scheme and host, drops a default port, resolves dot
 * segments, normalises percent-encoding of the host and IDNA; the fragment is
 * dropped because it never reaches the server, so `/a#x` and `/a#y` are the
 * same request. Path and query stay case-sensitive and in order, as servers
 * may treat them so.
 */
export function loopKey(url: URL): string {
  const copy = new URL(url.href);
  copy.hash = "";
  return copy.href;
}
