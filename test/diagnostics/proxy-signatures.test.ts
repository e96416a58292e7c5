import { describe, expect, it } from "vitest";
import {
  PROXY_PROVIDERS,
  type ResponseHeaders,
  detectProxyProvider,
  proxyBlockingProvider,
} from "../../src/diagnostics/proxy-signatures.js";

const EXAMPLES: readonly (readonly [string, ResponseHeaders])[] = [
  ["Cloudflare", { "cf-ray": "8a1b2c3d4e5f6789-AMS" }],
  ["Cloudflare", { server: "cloudflare" }],
  ["Cloudflare", { "cf-mitigated": "challenge" }],
  ["Akamai", { server: "AkamaiGHost" }],
  ["Imperva (Incapsula)", { "x-iinfo": "12-34567-0 0NNN RT(1700000000000 0) q(0 -1 -1 -1) r(0 -1)" }],
  ["Imperva (Incapsula)", { "x-cdn": "Incapsula" }],
  ["Sucuri", { "x-sucuri-id": "11005" }],
  ["Amazon CloudFront", { "x-amz-cf-id": "abcDEF123==" }],
  ["AWS WAF", { "x-amzn-waf-action": "captcha" }],
  ["Fastly", { "x-served-by": "cache-ams21080-AMS", "x-fastly-request-id": "0123456789abcdef" }],
  ["Azure Front Door", { "x-azure-ref": "20240101T000000Z-abc" }],
  ["DDoS-Guard", { server: "ddos-guard" }],
  ["Vercel", { "x-vercel-id": "fra1::abcde-1700000000000-0123" }],
  ["DataDome", { "x-datadome": "protected" }],
  ["StackPath", { "x-sp-url": "https://site.test/" }],
  ["Netlify", { "x-nf-request-id": "01HXYZ" }],
  ["Bunny CDN", { server: "BunnyCDN-DE1-1234" }],
  ["KeyCDN", { server: "keycdn-engine" }],
];

describe("proxy signatures", () => {
  it.each(EXAMPLES)("recognises %s from %j", (provider, headers) => {
    expect(detectProxyProvider(headers)).toBe(provider);
  });

  it("has an example for every provider in the table", () => {
    const covered = new Set(EXAMPLES.map(([provider]) => provider));
    expect(PROXY_PROVIDERS.map((entry) => entry.provider).filter((name) => !covered.has(name))).toEqual([]);
  });

  it("needs both Fastly headers, since x-served-by alone is common to many caches", () => {
    expect(detectProxyProvider({ "x-served-by": "cache-ams21080-AMS" })).toBeNull();
    expect(detectProxyProvider({ "x-fastly-request-id": "0123" })).toBeNull();
  });

  it("reads repeated headers and ignores case in values", () => {
    expect(detectProxyProvider({ server: ["nginx", "CloudFlare"] })).toBe("Cloudflare");
  });

  it("finds nothing on an ordinary origin", () => {
    expect(detectProxyProvider({ server: "nginx/1.25.3", "content-type": "text/html", via: "1.1 varnish" })).toBeNull();
    expect(detectProxyProvider({ server: "Apache" })).toBeNull();
  });

  it("counts only 4xx and 5xx responses as possibly blocked", () => {
    const headers = { "cf-ray": "8a1b2c3d4e5f6789-AMS", server: "cloudflare" };
    expect(proxyBlockingProvider(403, headers)).toBe("Cloudflare");
    expect(proxyBlockingProvider(503, headers)).toBe("Cloudflare");
    expect(proxyBlockingProvider(200, headers)).toBeNull();
    expect(proxyBlockingProvider(301, headers)).toBeNull();
    expect(proxyBlockingProvider(403, { server: "nginx" })).toBeNull();
  });
});
