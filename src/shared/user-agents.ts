/**
 * The User-Agents a diagnostic can speak as (issue 39): `browser`, sitediag's
 * own (the default, unchanged), or a search engine's crawler, so a site that
 * redirects or blocks by User-Agent shows it. The crawler strings are the
 * ones Google and Bing document for their evergreen crawlers, with the
 * Chrome version (their `W.X.Y.Z`) filled in; docs/api.md lists them.
 */

export const USER_AGENT_IDS = ["browser", "googlebot", "bingbot"] as const;

export type UserAgentId = (typeof USER_AGENT_IDS)[number];

/** Googlebot Smartphone (the crawler of mobile-first indexing) and Bingbot desktop, as documented. */
export const CRAWLER_USER_AGENTS: Readonly<Record<Exclude<UserAgentId, "browser">, string>> = {
  googlebot:
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.204 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  bingbot:
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/131.0.6778.204 Safari/537.36",
};

/** The User-Agent header for an id; undefined for `browser` and anything else (the prober's own). Total: an option from another vantage is read here too. */
export function crawlerUserAgent(id: unknown): string | undefined {
  return id === "googlebot" || id === "bingbot" ? CRAWLER_USER_AGENTS[id] : undefined;
}

export function isUserAgentId(text: string): text is UserAgentId {
  return (USER_AGENT_IDS as readonly string[]).includes(text);
}
