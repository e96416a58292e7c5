import { promises as dns } from "node:dns";
import { readFile, stat } from "node:fs/promises";
import { isIP } from "node:net";
import type { AbortWatch } from "./clock.js";
import { type CnameChain, walkCnameChain } from "./cname-chain.js";
import { type DnssecReading, readDnssec } from "./dnssec-query.js";

/** What resolving a target name gives: the contract between the resolver, the hosts file and the hop. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

export type Resolution =
  | { readonly ok: true; readonly addresses: readonly ResolvedAddress[]; readonly evidence: ResolutionEvidence }
  /** `code` is the resolver's own error code: ENOTFOUND, ENODATA, ESERVFAIL, EREFUSED, ETIMEOUT, EAI_AGAIN ... */
  | { readonly ok: false; readonly code: string; readonly evidence?: ResolutionEvidence }
  /** `evidence`: which servers were being asked when the hop's deadline ended the lookup; absent when none was asked. */
  | { readonly ok: false; readonly code: "ABORTED"; readonly evidence?: ResolutionEvidence };

/** Which resolver gave the answer: the hosts file, or DNS servers (SITEDIAG_DNS_SERVERS when configured, else the system's). */
export type ResolverSource =
  | { readonly kind: "hosts_file"; readonly path: string }
  | { readonly kind: "configured" | "system"; readonly servers: readonly string[] };

/** One A or AAAA record as the resolver gave it; `ttl` in seconds, null from a hosts file (which has none). */
export interface AnsweredRecord {
  readonly address: string;
  readonly family: 4 | 6;
  readonly ttl: number | null;
}

/**
 * What a lookup showed beyond its addresses, for details: who answered, every
 * record in the order it came (A, then AAAA), and the DNS response code of a
 * failure. Unbounded here; the probe's name-resolution record bounds it.
 */
export interface ResolutionEvidence {
  readonly source: ResolverSource;
  readonly records: readonly AnsweredRecord[];
  /** NXDOMAIN, SERVFAIL, REFUSED, FORMERR, NOTIMP, or NOERROR (no data); null when no server said (a timeout, a refused socket, a broken answer). */
  readonly rcode: string | null;
}

/** Turns a host name into every A and AAAA address, once; the caller pins what it gets. */
export interface Resolver {
  resolve(host: string, signal: AbortWatch): Promise<Resolution>;
  /**
   * For details only: the CNAME chain above a name `resolve` answered from
   * DNS, asked of the same servers (cname-chain.ts: extra queries, bounded).
   */
  cnameChain(host: string, signal: AbortWatch): Promise<CnameChain>;
  /** For details only: the name's DNSSEC state and Extended DNS Errors, asked of the same servers with the DO bit (dnssec-query.ts: one extra query, bounded). */
  dnssec(host: string, signal: AbortWatch): Promise<DnssecReading>;
}

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
      return raceAbort(lookup(host, options.servers, hosts, options.hostsFile, signal), signal, options.servers);
    },
    cnameChain: (host, signal) => walkCnameChain(host, options.servers, signal),
    dnssec: (host, signal) => readDnssec(host, options.servers, signal),
  };
}

async function lookup(
  host: string,
  servers: readonly string[],
  hosts: (() => Promise<HostsTable>) | undefined,
  hostsPath: string | undefined,
  signal: AbortWatch,
): Promise<Resolution> {
  const listed = hosts === undefined ? undefined : (await hosts()).get(normaliseName(host));
  if (listed !== undefined && hostsPath !== undefined) {
    const ipv6 = listed.filter(({ family }) => family === 6);
    const ipv4 = listed.filter(({ family }) => family === 4);
    const records = [...ipv4, ...ipv6].map(({ address, family }) => ({ address, family, ttl: null }));
    return {
      ok: true,
      addresses: interleave(ipv6, ipv4),
      evidence: { source: { kind: "hosts_file", path: hostsPath }, records, rcode: null },
    };
  }
  return dnsLookup(host, servers, signal);
}

async function dnsLookup(host: string, servers: readonly string[], signal: AbortWatch): Promise<Resolution> {
  const resolver = new dns.Resolver({ tries: 2 });
  if (servers.length > 0) resolver.setServers([...servers]);
  const cancel = () => resolver.cancel();
  signal.addEventListener("abort", cancel, { once: true });
  try {
    // With their TTLs: the same two queries, the records' TTL fields read as well.
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host, { ttl: true }), resolver.resolve6(host, { ttl: true })]);
    const records = [...answered(v4, 4), ...answered(v6, 6)];
    const ipv4 = records.filter(({ family }) => family === 4).map(({ address, family }) => ({ address, family }));
    const ipv6 = records.filter(({ family }) => family === 6).map(({ address, family }) => ({ address, family }));
    const source = serversAsked(servers, resolver);
    if (ipv4.length + ipv6.length > 0)
      return { ok: true, addresses: dedupe(interleave(ipv6, ipv4)), evidence: { source, records, rcode: null } };
    const code = combinedCode(v4, v6);
    return { ok: false, code, evidence: { source, records: [], rcode: RCODES[code] ?? null } };
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}

function answered(result: PromiseSettledResult<readonly { address: string; ttl: number }[]>, family: 4 | 6): AnsweredRecord[] {
  return result.status === "fulfilled" ? result.value.map(({ address, ttl }) => ({ address, family, ttl })) : [];
}

/** The response code behind c-ares' error codes; the others (ETIMEOUT, ECONNREFUSED, EBADRESP ...) are no server's word. */
const RCODES: Readonly<Record<string, string>> = {
  ENOTFOUND: "NXDOMAIN",
  ESERVFAIL: "SERVFAIL",
  EREFUSED: "REFUSED",
  EFORMERR: "FORMERR",
  ENOTIMP: "NOTIMP",
  ENODATA: "NOERROR",
};

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

/** The DNS servers a lookup asks: the configured ones, else those c-ares read from /etc/resolv.conf. */
function serversAsked(servers: readonly string[], resolver: Pick<dns.Resolver, "getServers"> = new dns.Resolver()): ResolverSource {
  return servers.length > 0 ? { kind: "configured", servers: [...servers] } : { kind: "system", servers: resolver.getServers() };
}

function raceAbort(lookup: Promise<Resolution>, signal: AbortWatch, servers: readonly string[]): Promise<Resolution> {
  return new Promise((resolve) => {
    // A lookup still waiting when the hop's deadline came: a silent server, no rcode (a name in the hosts file never waits).
    const onAbort = () => resolve({ ok: false, code: "ABORTED", evidence: { source: serversAsked(servers), records: [], rcode: null } });
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

/** Answers from a hosts file, by lower-case name without a trailing dot. */
export type HostsTable = ReadonlyMap<string, readonly ResolvedAddress[]>;

/**
 * Parses hosts(5): an address, then names, `#` to the end of a line a
 * comment. Lines whose first field is not an IP literal are skipped, as the
 * C library skips them; a name listed twice collects every address, in file
 * order, as getaddrinfo returns them.
 */
export function parseHostsFile(text: string): HostsTable {
  const table = new Map<string, ResolvedAddress[]>();
  for (const line of text.split(/\r?\n/)) {
    const [address, ...names] = (line.split("#", 1)[0] ?? "").trim().split(/\s+/);
    if (address === undefined || names.length === 0) continue;
    const family = isIP(address);
    if (family === 0) continue;
    for (const name of names) {
      const key = normaliseName(name);
      const entries = table.get(key) ?? [];
      if (!entries.some((entry) => entry.address === address)) entries.push({ address, family: family === 6 ? 6 : 4 });
      table.set(key, entries);
    }
  }
  return table;
}

function normaliseName(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}

// The C library reads the file on every lookup; re-reading at most this often keeps edits visible without a read per check.
const RECHECK_MS = 2_000;

/**
 * The hosts file as the system consults it before DNS, re-read when its
 * modification time changes. A missing or unreadable file is an empty table:
 * the system resolver carries on with DNS in that case too.
 */
function watchedHostsFile(path: string): () => Promise<HostsTable> {
  let table: HostsTable = new Map();
  let loadedMtimeMs = -1;
  let checkedAt = -Infinity;
  let pending: Promise<HostsTable> | undefined;

  const refresh = async (): Promise<HostsTable> => {
    try {
      const { mtimeMs } = await stat(path);
      if (mtimeMs !== loadedMtimeMs) {
        table = parseHostsFile(await readFile(path, "utf8"));
        loadedMtimeMs = mtimeMs;
      }
    } catch {
      table = new Map();
      loadedMtimeMs = -1;
    }
    checkedAt = performance.now();
    return table;
  };

  return () => {
    if (performance.now() - checkedAt < RECHECK_MS) return Promise.resolve(table);
    pending ??= refresh().finally(() => {
      pending = undefined;
    });
    return pending;
  };
}
