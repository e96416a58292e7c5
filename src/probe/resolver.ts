import { promises as dns } from "node:dns";
import { type HostsTable, normaliseName, watchedHostsFile } from "./hosts-file.js";
import type { Resolution, ResolvedAddress, Resolver } from "./resolution-types.js";
import type { AbortWatch } from "./deadline.js";

export type { Resolution, ResolvedAddress, Resolver } from "./resolution-types.js";

export interface ResolverOptions {
  /** SITEDIAG_DNS_SERVERS; empty for the servers of /etc/resolv.conf. */
  readonly servers: readonly string[];
  /** A hosts file consulted before DNS, as the system does (SITEDIAG_HOSTS_FILE); none when undefined. */
  readonly hostsFile?: string | undefined;
}

/**
 * Names are looked up in the hosts file first, then asked of DNS for A and
 * AAAA with c-ares: the configured servers, or those of /etc/resolv.conf.
 * Never getaddrinfo: it runs on libuv's four-thread pool, so a few names
 * whose server never answers would block every other lookup (and every file
 * operation) of the process. With c-ares a silent server delays only the
 * checks of the names it serves. A fresh channel per lookup: cancelling one
 * hop's queries cannot touch another's, and no answer is reused from
 * someone else's cache.
 */
export function createResolver(options: ResolverOptions): Resolver {
  const hosts = options.hostsFile === undefined ? undefined : watchedHostsFile(options.hostsFile);
  return {
    resolve(host, signal) {
      if (signal.aborted) return Promise.resolve({ ok: false, code: "ABORTED" });
      return raceAbort(lookup(host, options.servers, hosts, signal), signal);
    },
  };
}

async function lookup(host: string, servers: readonly string[], hosts: (() => Promise<HostsTable>) | undefined, signal: AbortWatch): Promise<Resolution> {
  const listed = hosts === undefined ? undefined : (await hosts()).get(normaliseName(host));
  if (listed !== undefined) {
    const ipv6 = listed.filter(({ family }) => family === 6);
    const ipv4 = listed.filter(({ family }) => family === 4);
    return { ok: true, addresses: interleave(ipv6, ipv4) };
  }
  return dnsLookup(host, servers, signal);
}

async function dnsLookup(host: string, servers: readonly string[], signal: AbortWatch): Promise<Resolution> {
  const resolver = new dns.Resolver({ tries: 2 });
  if (servers.length > 0) resolver.setServers([...servers]);
  const cancel = () => resolver.cancel();
  signal.addEventListener("abort", cancel, { once: true });
  try {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const ipv4 = v4.status === "fulfilled" ? v4.value.map((address) => ({ address, family: 4 as const })) : [];
    const ipv6 = v6.status === "fulfilled" ? v6.value.map((address) => ({ address, family: 6 as const })) : [];
    if (ipv4.length + ipv6.length > 0) return { ok: true, addresses: dedupe(interleave(ipv6, ipv4)) };
    return { ok: false, code: combinedCode(v4, v6) };
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}

/** Both queries came back empty: NXDOMAIN wins (the name does not exist), then a real error over "no data". */
function combinedCode(v4: PromiseSettledResult<unknown>, v6: PromiseSettledResult<unknown>): string {
  const codes = [v4, v6].map((result) => (result.status === "rejected" ? errorCode(result.reason) : "ENODATA"));
  if (codes.includes("ENOTFOUND")) return "ENOTFOUND";
  return codes.find((code) => code !== "ENODATA") ?? "ENODATA";
}

/** RFC 8305 §4: alternate families, IPv6 first, so one broken family costs one attempt, not all. */
function interleave(first: readonly ResolvedAddress[], second: readonly ResolvedAddress[]): ResolvedAddress[] {
  const out: ResolvedAddress[] = [];
  for (let i = 0; i < Math.max(first.length, second.length); i++) {
    const a = first[i];
    const b = second[i];
    if (a !== undefined) out.push(a);
    if (b !== undefined) out.push(b);
  }
  return out;
}

function dedupe(addresses: readonly ResolvedAddress[]): ResolvedAddress[] {
  const seen = new Set<string>();
  return addresses.filter(({ address }) => (seen.has(address) ? false : (seen.add(address), true)));
}

function raceAbort(lookup: Promise<Resolution>, signal: AbortWatch): Promise<Resolution> {
  return new Promise((resolve) => {
    const onAbort = () => resolve({ ok: false, code: "ABORTED" });
    signal.addEventListener("abort", onAbort, { once: true });
    void lookup.then((result) => {
      signal.removeEventListener("abort", onAbort);
      resolve(result);
    });
  });
}

export function errorCode(error: unknown): string {
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "string") return error.code;
  return "UNKNOWN";
}
