import { createSecureContext, rootCertificates } from "node:tls";
import { createAddressPolicy } from "./policy/address-policy.js";
import { sharedClockMs } from "./clock.js";
import { DEFAULT_MAX_RESPONSE_HEAD_BYTES, type HopDeps, runHop } from "./hop.js";
import type { HopRequest, Prober, ProberOptions, TimedHopOutcome } from "./hop-types.js";
import { createConnectionKeeper, MAX_KEPT } from "./http/kept-connections.js";
import { type DefectReporter, logDefect } from "./defect-log.js";
import { createResolver } from "./resolver.js";
import { screenUrl } from "./policy/target-policy.js";
import { runTlsVersions, versionContexts } from "./tls-versions.js";

/** What a prober tells its owner beyond its outcomes; none of it can cross to a probe thread, which uses the defaults. */
export interface ProberHooks {
  /** Told once per hop that met a defect of ours (internal_probe_error); logDefect (a JSON line on stdout) when absent. */
  readonly onDefect?: DefectReporter;
}

/**
 * The project's only way out to the network. Options come from Config (the
 * server passes SITEDIAG_ALLOW_CIDRS and SITEDIAG_DNS_SERVERS through); the
 * engine reads no environment itself, proxy variables included.
 */
export function createProber(options: ProberOptions, hooks: ProberHooks = {}): Prober {
  const addresses = createAddressPolicy(options.allowCidrs);
  const resolver = createResolver({ servers: options.dnsServers, hostsFile: options.hostsFile });
  // Built once and shared by every HTTPS hop: a context made from ~150 root
  // certificates costs milliseconds. Without a CA file it is Node's default
  // (its root store, NODE_EXTRA_CA_CERTS included), which tls.connect would
  // otherwise build afresh for every connection (docs/benchmarks.md).
  const secureContext = options.ca === undefined ? createSecureContext() : createSecureContext({ ca: [...rootCertificates, options.ca] });
  const requestHeaders = Object.freeze([
    Object.freeze(["user-agent", options.userAgent] as const),
    Object.freeze(["accept", "*/*"] as const),
  ]);
  const keeper = createConnectionKeeper(options.reuseConnections === false ? 0 : MAX_KEPT);
  // Details' version-limited handshakes: built on the first one asked for, never by a prober that does none.
  const contexts = versionContexts();
  const deps: HopDeps = {
    addresses,
    resolver,
    secureContext,
    requestHeaders,
    maxResponseHeadBytes: options.maxResponseHeadBytes ?? DEFAULT_MAX_RESPONSE_HEAD_BYTES,
    keeper,
    reportDefect: hooks.onDefect ?? logDefect,
  };
  return {
    screen: (url, ports) => screenUrl(url, ports, addresses),
    // Everything the target can do resolves as a response, failure or refusal;
    // a rejection here is a defect of ours, which the service reports as a 500
    // rather than blaming the site.
    // The span is read on the loop that ran the hop: on a probe thread, a loop that does nothing else.
    hop: (request) => timedHop(request, deps),
    tlsVersions: (request) => runTlsVersions(request, deps, contexts),
    // Nothing is held between hops but a connection kept for a check's next hop, which closing lets go.
    close: () => {
      keeper.close();
      return Promise.resolve();
    },
  };
}

async function timedHop(request: HopRequest, deps: HopDeps): Promise<TimedHopOutcome> {
  const startedAt = sharedClockMs();
  const { outcome, endedAt } = await runHop(request, deps);
  // endedAt is this thread's performance.now(); the shared clock is the same reading on the epoch scale.
  return Object.assign({}, outcome, { span: { startedAt, endedAt: performance.timeOrigin + endedAt } });
}
