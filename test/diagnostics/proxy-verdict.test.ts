import { describe, expect, it } from "vitest";
import type { HeaderTest } from "../../src/diagnostics/proxy-providers.js";
import { PROXY_PROVIDERS, proxyMatch } from "../../src/diagnostics/proxy-signatures.js";
import { proxyVerdict } from "../../src/diagnostics/proxy-verdict.js";

/** A header value that passes the test: the pattern's first literal alternative. */
function sample(test: HeaderTest): [string, string] {
  if ("present" in test) return [test.header, "1"];
  const value = test.matches.source
    .replace(/^\^/, "")
    .replace(/\$$/, "")
    .replace(/\(\?:([^|)]*)[^)]*\)/, "$1")
    .replaceAll("\\/", "/");
  expect(test.matches.test(value)).toBe(true);
  return [test.header, value];
}

const headersOf = (tests: readonly HeaderTest[]): Record<string, string> => Object.fromEntries(tests.map(sample));

/** The statuses a person meets: a page, a challenge's 202, the 4xx a proxy refuses with, every 5xx a rule names. */
const COMMON = [200, 202, 403, 405, 429, 500, 502, 503, 504];

/** Every provider, every signature, every kind rule, each with the statuses it names or the common ones. */
const CASES = PROXY_PROVIDERS.flatMap((provider) => [
  ...provider.signatures.flatMap((signature) => COMMON.map((status) => ({ provider, status, headers: headersOf(signature) }))),
  ...(provider.kinds ?? []).flatMap((rule) =>
    (rule.statuses ?? COMMON).map((status) => ({
      provider,
      status,
      headers: { ...headersOf(provider.signatures[0] ?? []), ...headersOf(rule.tests ?? []) },
    })),
  ),
]).map((item) => ({ ...item, label: `${item.provider.id} ${item.status} ${JSON.stringify(item.headers)}` }));

describe("proxyVerdict: a sentence that agrees with the verdict, for every provider and status the signatures know", () => {
  it.each(CASES)("$label", ({ provider, status, headers }) => {
    const match = proxyMatch(status, headers);
    expect(match?.provider).toBe(provider.id);
    if (match === null) return;
    const verdict = proxyVerdict(match.provider, match.kind, status);
    // Named in words, never as an id with the kind in brackets.
    expect(verdict.sentence).toContain(provider.provider);
    expect(verdict.sentence).not.toMatch(/\((?:unknown|challenge|block|origin error)\)/);
    if (status >= 500) {
      // DOWN stays DOWN: nothing in the sentence says the site is fine.
      expect(verdict.gate).toBeNull();
      expect(verdict.sentence).not.toMatch(/not an outage|Reachable|Served through/);
      expect(verdict.sentence).toContain(`answered ${status}`);
    }
    if (match.kind === "origin_error") expect(verdict.sentence).toMatch(/origin server/);
    if (match.kind === "challenge" && status < 500)
      expect(verdict).toEqual({ gate: "challenged", sentence: expect.stringMatching(/^Reachable, but a .+ challenge answered/) });
    if (match.kind === "block" && status < 500)
      expect(verdict).toEqual({ gate: "blocked", sentence: expect.stringMatching(/^Reachable, but .+ blocked this request/) });
    if (match.kind === "unknown" || match.kind === "origin_error") expect(verdict.gate).toBeNull();
    if (status < 400 && match.kind === "unknown") expect(verdict.sentence).toBe(`Served through ${provider.provider}`);
  });

  it("words a Cloudflare challenge as the amber state", () => {
    const match = proxyMatch(403, { "cf-ray": "1-AMS", "cf-mitigated": "challenge", server: "cloudflare" });
    expect(match).toEqual({ provider: "cloudflare", kind: "challenge" });
    expect(proxyVerdict("cloudflare", "challenge", 403)).toEqual({
      gate: "challenged",
      sentence: "Reachable, but a Cloudflare challenge answered: a browser may pass it; automated clients won't",
    });
  });

  it.each([
    [502, "Cloudflare answered 502: it could not reach the origin server, or got no valid answer from it"],
    [504, "Cloudflare answered 504: the origin server did not answer it in time"],
    [521, "Cloudflare answered 521: the origin server refused its connection"],
    [522, "Cloudflare answered 522: its connection to the origin server timed out"],
  ])("words a Cloudflare %i as the origin's failure", (status, sentence) => {
    const match = proxyMatch(status, { "cf-ray": "1-AMS", server: "cloudflare" });
    expect(match).toEqual({ provider: "cloudflare", kind: "origin_error" });
    expect(proxyVerdict("cloudflare", "origin_error", status)).toEqual({ gate: null, sentence });
  });

  it("claims nothing for a kind it does not know, and names an unknown provider by its id", () => {
    expect(proxyVerdict("newcdn", "teapot", 403)).toEqual({
      gate: null,
      sentence: "newcdn answered 403: the origin server's own answer or a rule of newcdn's; its headers don't say which",
    });
  });
});
