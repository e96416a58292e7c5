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
  /** Alternatives: the provider is detected when any one of them matches. */
  readonly signatures: readonly (readonly HeaderTest[])[];
}

const present = (header: string): HeaderTest => ({ header, present: true });
const matches = (header: string, pattern: RegExp): HeaderTest => ({ header, matches: pattern });

export const PROXY_PROVIDERS: readonly ProxyProvider[] = [
  {
    provider: "Cloudflare",
    signatures: [[present("cf-ray")], [present("cf-mitigated")], [matches("server", /^cloudflare/i)]],
  },
  {
    provider: "Akamai",
    signatures: [[matches("server", /^AkamaiGHost/i)], [matches("server", /^AkamaiNetStorage/i)]],
  },
  {
    provider: "Imperva (Incapsula)",
    signatures: [[present("x-iinfo")], [matches("x-cdn", /^(?:Incapsula|Imperva)/i)]],
  },
  {
    provider: "Sucuri",
    signatures: [[present("x-sucuri-id")], [present("x-sucuri-block")], [matches("server", /^Sucuri\/Cloudproxy/i)]],
  },
  {
    provider: "Amazon CloudFront",
    signatures: [[present("x-amz-cf-id")], [present("x-amz-cf-pop")], [matches("server", /^CloudFront$/i)]],
  },
  {
    provider: "AWS WAF",
    signatures: [[present("x-amzn-waf-action")]],
  },
  {
    provider: "Fastly",
    // x-served-by alone is used by many caches; Fastly sets it together with its request id.
    signatures: [[present("x-served-by"), present("x-fastly-request-id")]],
  },
  {
    provider: "Azure Front Door",
    signatures: [[present("x-azure-ref")]],
  },
  {
    provider: "DDoS-Guard",
    signatures: [[matches("server", /^ddos-guard/i)]],
  },
  {
    provider: "Vercel",
    signatures: [[present("x-vercel-id")], [present("x-vercel-mitigated")]],
  },
  {
    provider: "DataDome",
    signatures: [[present("x-datadome")], [present("x-datadome-cid")], [matches("server", /^DataDome/i)]],
  },
  {
    provider: "StackPath",
    signatures: [[present("x-sp-url")], [present("x-sp-edge-host")], [present("x-sp-waf-rule")], [matches("server", /^StackPath/i)]],
  },
  {
    provider: "Netlify",
    signatures: [[present("x-nf-request-id")]],
  },
  {
    provider: "Bunny CDN",
    signatures: [[matches("server", /^BunnyCDN/i)], [present("cdn-pullzone")]],
  },
  {
    provider: "KeyCDN",
    signatures: [[matches("server", /^keycdn/i)]],
  },
];

export type ResponseHeaders = Readonly<Record<string, string | readonly string[]>>;

/** The first provider whose signature the headers carry, or null. */
export function detectProxyProvider(headers: ResponseHeaders): string | null {
  for (const { provider, signatures } of PROXY_PROVIDERS) {
    if (signatures.some((tests) => tests.every((test) => passes(test, headers)))) return provider;
  }
  return null;
}

/** Spec §2.2: only an error response (4xx, 5xx) from a proxy counts as possibly blocked. */
export function proxyBlockingProvider(status: number, headers: ResponseHeaders): string | null {
  if (status < 400 || status > 599) return null;
  return detectProxyProvider(headers);
}

function passes(test: HeaderTest, headers: ResponseHeaders): boolean {
  const value = headers[test.header];
  if (value === undefined) return false;
  if ("present" in test) return true;
  const values = typeof value === "string" ? [value] : value;
  return values.some((one) => test.matches.test(one.trim()));
}
