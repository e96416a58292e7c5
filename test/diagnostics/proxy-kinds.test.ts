import { describe, expect, it } from "vitest";
import { PROXY_PROVIDERS, proxyBlockingProvider, proxyMatch } from "../../src/diagnostics/proxy-signatures.js";

describe("proxyMatch: which proxy answered and what its answer means", () => {
  it.each([
    ["a Cloudflare challenge", 403, { "cf-ray": "1-AMS", "cf-mitigated": "challenge" }, { provider: "cloudflare", kind: "challenge" }],
    ["a Cloudflare origin error (522)", 522, { "cf-ray": "1-AMS", server: "cloudflare" }, { provider: "cloudflare", kind: "origin_error" }],
    [
      "a Cloudflare 502 (its own or the origin's, passed on)",
      502,
      { "cf-ray": "1-AMS", server: "cloudflare" },
      { provider: "cloudflare", kind: "origin_error" },
    ],
    ["a Cloudflare 504", 504, { "cf-ray": "1-AMS", server: "cloudflare" }, { provider: "cloudflare", kind: "origin_error" }],
    ["a Cloudflare 530", 530, { "cf-ray": "1-AMS" }, { provider: "cloudflare", kind: "origin_error" }],
    ["a plain Cloudflare 403: no documented signal", 403, { "cf-ray": "1-AMS" }, { provider: "cloudflare", kind: "unknown" }],
    ["a page served through Cloudflare", 200, { server: "cloudflare" }, { provider: "cloudflare", kind: "unknown" }],
    ["an Akamai edge denial", 403, { server: "AkamaiGHost" }, { provider: "akamai", kind: "block" }],
    ["an Akamai edge gateway error", 503, { server: "AkamaiGHost" }, { provider: "akamai", kind: "origin_error" }],
    ["a Sucuri block", 403, { "x-sucuri-id": "1", "x-sucuri-block": "BL1" }, { provider: "sucuri", kind: "block" }],
    ["a CloudFront 502", 502, { server: "CloudFront", "x-amz-cf-id": "abc" }, { provider: "cloudfront", kind: "origin_error" }],
    ["a CloudFront 403 of its own", 403, { server: "CloudFront", "x-amz-cf-id": "abc" }, { provider: "cloudfront", kind: "block" }],
    ["an origin's 403 through CloudFront", 403, { server: "nginx", "x-amz-cf-id": "abc" }, { provider: "cloudfront", kind: "unknown" }],
    ["an AWS WAF challenge", 202, { "x-amzn-waf-action": "challenge" }, { provider: "aws_waf", kind: "challenge" }],
    ["an AWS WAF captcha", 405, { "x-amzn-waf-action": "captcha" }, { provider: "aws_waf", kind: "challenge" }],
    ["a Vercel challenge", 403, { "x-vercel-id": "a", "x-vercel-mitigated": "challenge" }, { provider: "vercel", kind: "challenge" }],
    ["a Vercel deny", 403, { "x-vercel-id": "a", "x-vercel-mitigated": "deny" }, { provider: "vercel", kind: "block" }],
  ] as const)("%s", (_label, status, headers, expected) => {
    expect(proxyMatch(status, headers)).toEqual(expected);
  });

  it("is null when no signature matches", () => {
    expect(proxyMatch(403, { server: "nginx" })).toBeNull();
  });

  it("leaves proxyBlocked as the contract defines it: any 4xx/5xx from a detected provider", () => {
    expect(proxyBlockingProvider(403, { "cf-ray": "1" })).toBe("Cloudflare");
    expect(proxyBlockingProvider(202, { "x-amzn-waf-action": "challenge" })).toBeNull();
    expect(proxyBlockingProvider(522, { "cf-ray": "1" })).toBe("Cloudflare");
  });

  it("gives every provider a distinct snake_case id", () => {
    const ids = PROXY_PROVIDERS.map((provider) => provider.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][a-z0-9_]*$/);
  });
});
