/**
 * Every number the public contract names, in one place, with the section of
 * ../shared/spec/site-diagnostics-api.md it comes from. Configuration may
 * override the timeouts and budget for tests and deployments; these are the
 * defaults and the costs, which are not configurable.
 */
export const API_VERSION = "v1"; // §9

export const SITE_CHECK = {
  /** §8: credits per is-site-down request. */
  creditCost: 2,
  /** §4.1 behaviour 1: at most five HTTP requests in total, redirects included. */
  maxRequests: 5,
  /** §4.1 behaviour 2: six-second fetch timeout per request. */
  requestTimeoutMs: 6_000,
} as const;

export const REDIRECT_TRACE = {
  /** §8: credits per redirect-check request. */
  creditCost: 5,
  /** §8: at most 20 redirects followed. */
  maxRedirects: 20,
  /** §8: three seconds per request. */
  hopTimeoutMs: 3_000,
  /** §8: 30-second overall budget. */
  totalTimeoutMs: 30_000,
  /** §4.2 behaviour 3: only ports 80 and 443. */
  ports: [80, 443] as readonly number[],
} as const;

export const CREDITS = {
  /** §8: shared budget per key. */
  budget: 300,
  /** §8: rolling 24 hours. */
  windowSeconds: 86_400,
} as const;

/** Not in the contract ("not shown"): our documented cap on the url parameter. */
export const MAX_URL_LENGTH = 2_048;

/** Not in the contract (batch operations are ours): the size of a batch and how many of its items run at once. */
export const BATCH = {
  maxItems: 100,
  concurrency: 8,
} as const;

/**
 * Not in the contract: what one check's cookie jar keeps, as
 * browsers bound theirs, so a site's Set-Cookie flood costs only its own check
 * a bounded amount. RFC 6265 6.1 asks for at least 50 a domain, 3000 in all
 * and 4096 bytes a cookie; a check lives for at most 21 requests, so 180 in
 * all (Chromium's per-domain figure) is more than any real site needs.
 */
export const CHECK_COOKIES = {
  /** Cookies kept per domain attribute (host-only cookies count under their host); the least recently used goes first. */
  perDomain: 50,
  /** Cookies kept in all; the least recently used goes first. */
  total: 180,
  /** RFC 6265bis 5.6: a cookie whose name and value together pass this many octets is ignored whole. */
  maxCookieBytes: 4_096,
  /** The Cookie header sent: cookies that would pass it are left out, as a request head is bounded everywhere. */
  maxHeaderBytes: 8_192,
  /**
   * Set-Cookie lines of one response that are read at all. Parsing a line is
   * the jar's costliest step (tough-cookie); no response can leave more
   * than `total` cookies in the jar, so later lines could only replace what
   * the same response set. So the CPU a hostile answer, or a 21-hop trace of
   * them, can cost is bounded (figures: docs/benchmarks.md).
   */
  maxSetCookieLines: 180,
} as const;

/**
 * Not in the contract: how much of a server's certificate an answer copies.
 * The certificate is the target's own writing: without a bound, a site
 * makes every answer about it (and every record of it) as large as the
 * handshake allows, about 100 KiB per hop. Public CAs put at most 100 names
 * in a certificate (Let's Encrypt's limit; commercial CAs' multi-domain
 * products stop near there too), so `maxAltNames` keeps every name of any
 * public site; a DNS name is at most 253 characters, 257 with its "DNS:"
 * label, within `maxChars`, as is any real subject or serial number.
 */
export const CERTIFICATE_TEXT = {
  /** subjectAltNames entries kept, in the certificate's order; the rest are left out. */
  maxAltNames: 100,
  /** Characters kept of a subject, issuer, serial number or subjectAltNames entry; longer ones end in "…". */
  maxChars: 320,
} as const;

/** Not in the contract (vantages are ours): how many a call may name, and how long a name may be (docs/vantages.md). */
export const VANTAGES = {
  maxNamed: 16,
  maxNameLength: 32,
} as const;
