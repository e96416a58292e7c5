/**
 * The statuses Fetch treats as redirects (WHATWG Fetch, "redirect status").
 * 300, 304, 305 and 306 are answers in their own right and end the chain.
 */
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export function isRedirectStatus(status: number): boolean {
  return REDIRECT_STATUSES.has(status);
}
