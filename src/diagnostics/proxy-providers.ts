/** What a proxy's answer means, as far as its own documented signals tell. */
export type ProxyKind = "challenge" | "block" | "origin_error" | "unknown";

/**
 * Response headers that show a content-delivery or security proxy answered in
 * front of the origin (spec §2.2 proxyBlocked). Policy as data: each provider
 * is a list of alternative signatures; a signature matches when every one of
 * its header tests does. Header names are lower case, as the prober gives them.
 */
export type HeaderTest =
  /** The header is present, whatever its value. */
  | { readonly header: string; readonly present: true }
  /** Some value of the header matches the pattern. */
  | { readonly header: string; readonly matches: RegExp };

export interface ProxyProvider {
  readonly provider: string;
  /** Stable id in `details.proxy.provider`. */
  readonly id: string;
  /** Alternatives: the provider is detected when any one of them matches. */
  readonly signatures: readonly (readonly HeaderTest[])[];
  /**
   * What the provider's answer means, from signals it documents; the first
   * rule that matches wins, and none matching is `unknown`. A provider with no
   * documented signal has no rules: guessing "block" from a bare 403 would
   * blame the proxy for what the origin said.
   */
  readonly kinds?: readonly KindRule[];
}

/** A kind, when the status is in `statuses` (any when absent) and every header test passes. */
export interface KindRule {
  readonly kind: Exclude<ProxyKind, "unknown">;
  readonly statuses?: readonly number[];
  readonly tests?: readonly HeaderTest[];
}

const present = (header: string): HeaderTest => ({ header, present: true });
const matches = (header: string, pattern: RegExp): HeaderTest => ({ header, matches: pattern });
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, index) => from + index);

export const PROXY_PROVIDERS: readonly ProxyProvider[] = [
  {
    provider: "Cloudflare",
    id: "cloudflare",
    signatures: [[present("cf-ray")], [present("cf-mitigated")], [matches("server", /^cloudflare/i)]],
    kinds: [
      // "the Challenge Page response (regardless of the Challenge Page type) will have the
      // cf-mitigated header present and set to challenge" -- developers.cloudflare.com/
      // cloudflare-challenges/challenge-types/challenge-pages/detect-response
      { kind: "challenge", tests: [matches("cf-mitigated", /^challenge$/i)] },
      // 520-527 are Cloudflare's own "the origin failed behind us" answers (unknown error,
      // web server down, connection timed out, origin unreachable, timeout, SSL handshake
      // failed, invalid origin certificate, Railgun) and 530 carries a 1xxx origin DNS
      // error -- developers.cloudflare.com/support/troubleshooting/http-status-codes/
      // cloudflare-5xx-errors/. The origin failed; nobody blocked anyone.
      { kind: "origin_error", statuses: [...range(520, 527), 530] },
      // Cloudflare writes "Server: cloudflare" on every answer it proxies, so a 502 or 504
      // through it is its own "Bad gateway / Gateway timeout" page or the origin's, passed
      // on; either way the failure is at the origin's side of Cloudflare, not a block
      // (developers.cloudflare.com/support/troubleshooting/http-status-codes/cloudflare-5xx-errors/error-502-504/).
      { kind: "origin_error", statuses: [502, 504] },
    ],
  },
  {
    provider: "Akamai",
    id: "akamai",
    signatures: [[matches("server", /^AkamaiGHost/i)], [matches("server", /^AkamaiNetStorage/i)]],
    kinds: [
      // Proxied answers keep the origin's Server header; "Server: AkamaiGHost" is the edge
      // speaking for itself, and its 403 is the "Access Denied ... Reference #" page its
      // security products serve (Akamai's community and techdocs on edge error pages).
      { kind: "block", statuses: [403], tests: [matches("server", /^AkamaiGHost/i)] },
      // The edge's own 502/503/504 means it could not get an answer from the origin.
      { kind: "origin_error", statuses: [502, 503, 504], tests: [matches("server", /^AkamaiGHost/i)] },
    ],
  },
  {
    provider: "Imperva (Incapsula)",
    id: "imperva",
    signatures: [[present("x-iinfo")], [matches("x-cdn", /^(?:Incapsula|Imperva)/i)]],
  },
  {
    provider: "Sucuri",
    id: "sucuri",
    signatures: [[present("x-sucuri-id")], [present("x-sucuri-block")], [matches("server", /^Sucuri\/Cloudproxy/i)]],
    kinds: [
      // The firewall's "Access Denied - Sucuri Website Firewall" page carries X-Sucuri-Block
      // naming the rule that matched (docs.sucuri.net, Website Firewall troubleshooting).
      { kind: "block", tests: [present("x-sucuri-block")] },
    ],
  },
  {
    provider: "Amazon CloudFront",
    id: "cloudfront",
    signatures: [[present("x-amz-cf-id")], [present("x-amz-cf-pop")], [matches("server", /^CloudFront$/i)]],
    kinds: [
      // CloudFront answers 502 when it cannot connect to or negotiate with the origin and 504
      // when the origin did not answer in time; then "Server: CloudFront" is its own
      // (docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/troubleshooting-response-errors.html).
      { kind: "origin_error", statuses: [502, 504], tests: [matches("server", /^CloudFront$/i)] },
      // Its own 403 ("Request blocked", "The request could not be satisfied") is what a viewer
      // gets when AWS WAF blocks the request or a geographic restriction applies
      // (DeveloperGuide/georestrictions.html, distribution-web-awswaf.html); the origin never saw it.
      { kind: "block", statuses: [403], tests: [matches("server", /^CloudFront$/i)] },
    ],
  },
  {
    provider: "AWS WAF",
    id: "aws_waf",
    signatures: [[present("x-amzn-waf-action")]],
    kinds: [
      // "The header x-amzn-waf-action with a value of challenge" (with a 202), "... of captcha"
      // (with a 405) -- docs.aws.amazon.com/waf/latest/developerguide/waf-captcha-and-challenge-actions.html.
      // Both ask the client to prove itself: a challenge.
      { kind: "challenge", tests: [matches("x-amzn-waf-action", /^(?:challenge|captcha)$/i)] },
    ],
  },
  {
    provider: "Fastly",
    id: "fastly",
    // x-served-by alone is used by many caches; Fastly sets it together with its request id.
    signatures: [[present("x-served-by"), present("x-fastly-request-id")]],
  },
  {
    provider: "Azure Front Door",
    id: "azure_front_door",
    signatures: [[present("x-azure-ref")]],
  },
  {
    provider: "DDoS-Guard",
    id: "ddos_guard",
    signatures: [[matches("server", /^ddos-guard/i)]],
  },
  {
    provider: "Vercel",
    id: "vercel",
    signatures: [[present("x-vercel-id")], [present("x-vercel-mitigated")]],
    kinds: [
      // Vercel's firewall marks what it did in x-vercel-mitigated: "challenge" for a challenge
      // (Attack Challenge Mode, challenge rules), "deny" for a deny rule (Vercel's firewall
      // documentation; the reference search here did not return that page, so this row rests
      // on the header's documented name and values as recalled, and is easy to drop).
      { kind: "challenge", tests: [matches("x-vercel-mitigated", /^challenge$/i)] },
      { kind: "block", tests: [matches("x-vercel-mitigated", /^deny$/i)] },
    ],
  },
  {
    provider: "DataDome",
    id: "datadome",
    signatures: [[present("x-datadome")], [present("x-datadome-cid")], [matches("server", /^DataDome/i)]],
  },
  {
    provider: "StackPath",
    id: "stackpath",
    signatures: [[present("x-sp-url")], [present("x-sp-edge-host")], [present("x-sp-waf-rule")], [matches("server", /^StackPath/i)]],
  },
  {
    provider: "Netlify",
    id: "netlify",
    signatures: [[present("x-nf-request-id")]],
  },
  {
    provider: "Bunny CDN",
    id: "bunny_cdn",
    signatures: [[matches("server", /^BunnyCDN/i)], [present("cdn-pullzone")]],
  },
  {
    provider: "KeyCDN",
    id: "keycdn",
    signatures: [[matches("server", /^keycdn/i)]],
  },
];

/** The display name of a provider id of `details.proxy` ("cloudflare" -> "Cloudflare"); the id itself when unknown. */
export function providerName(id: string): string {
  return PROXY_PROVIDERS.find((provider) => provider.id === id)?.provider ?? id;
}
