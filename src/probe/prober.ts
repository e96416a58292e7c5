import { createAddressPolicy } from "./address-policy.js";
import { runHop } from "./hop.js";
import type { Prober, ProberOptions } from "./hop-types.js";
import { createResolver } from "./resolver.js";
import { screenUrl } from "./target-policy.js";

/**
 * The project's only way out to the network. Options come from Config (the
 * server passes SITEDIAG_ALLOW_CIDRS and SITEDIAG_DNS_SERVERS through); the
 * engine reads no environment itself, proxy variables included.
 */
export function createProber(options: ProberOptions): Prober {
  const addresses = createAddressPolicy(options.allowCidrs);
  const resolver = createResolver(options.dnsServers);
  const ca = options.ca === undefined ? undefined : [options.ca];
  const deps = { addresses, resolver, ca, userAgent: options.userAgent };
  return {
    screen: (url, ports) => screenUrl(url, ports, addresses),
    hop: (request) => runHop(request, deps).catch((error: unknown) => ({
      kind: "failure" as const,
      failure: { stage: "http" as const, timedOut: false, cause: "UNKNOWN", reason: `The request failed: ${String(error)}`, elapsedMs: 0, remoteAddress: null },
    })),
    // Every hop owns and closes its own client and resolver channel: nothing is held between hops.
    close: () => Promise.resolve(),
  };
}
