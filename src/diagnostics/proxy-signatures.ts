import type { ProxyKind, ProxyMatch } from "./diagnostic-details.js";
import { type HeaderMap, headerValue } from "../probe/http/header-map.js";
import { type HeaderTest, PROXY_PROVIDERS, type ProxyProvider } from "./proxy-providers.js";

// Which proxy answered, read off a response's headers with the table of
// proxy-providers.ts (kept apart, free of Node, so the page can name providers).
export { PROXY_PROVIDERS, providerName } from "./proxy-providers.js";

/** A response's headers (HopResponse.headers): names the target chose, read by own property only (header-map.ts). */
export type ResponseHeaders = HeaderMap;

/** The first provider whose signature the headers carry, or null. */
export function detectProxyProvider(headers: ResponseHeaders): string | null {
  return matchingProvider(headers)?.provider ?? null;
}

function matchingProvider(headers: ResponseHeaders): ProxyProvider | null {
  return PROXY_PROVIDERS.find(({ signatures }) => signatures.some((tests) => tests.every((test) => passes(test, headers)))) ?? null;
}

/**
 * `details.proxy`: which provider answered (whatever the status) and what its
 * answer means by the provider's own signals. Apart from proxyBlocked, which
 * keeps the contract's rule (any 4xx/5xx from a detected provider).
 */
export function proxyMatch(status: number, headers: ResponseHeaders): ProxyMatch | null {
  const provider = matchingProvider(headers);
  if (provider === null) return null;
  const rule = (provider.kinds ?? []).find(
    (candidate) =>
      (candidate.statuses === undefined || candidate.statuses.includes(status)) &&
      (candidate.tests ?? []).every((test) => passes(test, headers)),
  );
  const kind: ProxyKind = rule?.kind ?? "unknown";
  return { provider: provider.id, kind };
}

/** Spec §2.2: only an error response (4xx, 5xx) from a proxy counts as possibly blocked. */
export function proxyBlockingProvider(status: number, headers: ResponseHeaders): string | null {
  if (status < 400 || status > 599) return null;
  return detectProxyProvider(headers);
}

function passes(test: HeaderTest, headers: ResponseHeaders): boolean {
  const value = headerValue(headers, test.header);
  if (value === undefined) return false;
  if ("present" in test) return true;
  const values = typeof value === "string" ? [value] : value;
  return values.some((one) => test.matches.test(one.trim()));
}
