import type { ProxyKind } from "./proxy-providers.js";
import { providerName } from "./proxy-providers.js";

/**
 * What a person is told about the proxy or CDN that answered: one sentence
 * that agrees with the check's verdict (a 5xx is DOWN, so its sentence names
 * the failure, never "not an outage"), and whether the answer puts the site
 * in the third, amber state: it answered, but a proxy's challenge or block
 * stood between it and this client. The page and the CLI both read it; the
 * API's `status` keeps the contract (a challenge 403 is still "up").
 *
 * Pure and free of Node: the page bundles it.
 */
export interface ProxyVerdict {
  /** "challenged" or "blocked": the amber state; null when the site's own verdict (up or down) stands alone. */
  readonly gate: "challenged" | "blocked" | null;
  readonly sentence: string;
}

/**
 * What each origin-error status means when a proxy answers it in the
 * provider's own name (the kinds of proxy-providers.ts name the statuses
 * each provider uses so); a status not listed reads the general clause.
 */
const ORIGIN_FAILURES: Readonly<Record<number, string>> = {
  502: "it could not reach the origin server, or got no valid answer from it",
  503: "the origin server was unavailable to it",
  504: "the origin server did not answer it in time",
  520: "the origin server gave it an empty or unexpected answer",
  521: "the origin server refused its connection",
  522: "its connection to the origin server timed out",
  523: "it could not reach the origin server (no route to it)",
  524: "the origin server took its connection but did not answer in time",
  525: "its TLS handshake with the origin server failed",
  526: "the origin server's certificate is not valid",
  527: "its Railgun connection to the origin server failed",
  530: "it could not resolve or reach the origin server",
};

const ORIGIN_FAILURE = "it could not get an answer from the origin server";

const KINDS: ReadonlySet<string> = new Set<ProxyKind>(["challenge", "block", "origin_error", "unknown"]);

/**
 * The verdict for the proxy `provider` (an id of `details.proxy`) whose answer
 * of `status` means `kind`. The kind arrives as the API's string; one this
 * code does not know reads as "unknown", which claims nothing.
 */
export function proxyVerdict(provider: string, kind: string, status: number): ProxyVerdict {
  const name = providerName(provider);
  const error = status >= 500;
  const known = KINDS.has(kind) ? (kind as ProxyKind) : "unknown";
  switch (known) {
    case "challenge":
      return error
        ? { gate: null, sentence: `${name} answered ${status} with a challenge: a browser may pass it; automated clients won't` }
        : { gate: "challenged", sentence: `Reachable, but a ${name} challenge answered: a browser may pass it; automated clients won't` };
    case "block":
      return error
        ? { gate: null, sentence: `${name} answered ${status} and blocked the request before it reached the origin server` }
        : {
            gate: "blocked",
            sentence: `Reachable, but ${name} blocked this request (${status}) before it reached the origin server: other clients or places may be let through`,
          };
    case "origin_error":
      return { gate: null, sentence: `${name} answered ${status}: ${ORIGIN_FAILURES[status] ?? ORIGIN_FAILURE}` };
    case "unknown":
      if (error)
        return {
          gate: null,
          sentence: `${name} answered ${status}: its headers don't say whether the error is its own or the origin server's`,
        };
      if (status >= 400)
        return {
          gate: null,
          sentence: `${name} answered ${status}: the origin server's own answer or a rule of ${name}'s; its headers don't say which`,
        };
      return { gate: null, sentence: `Served through ${name}` };
  }
}
