/**
 * The record of one name's resolution, as details show it. Every text in it
 * is a DNS server's writing (a CNAME target, whatever bytes a label holds) or
 * the machine's (a hosts file path), so the record is built by total
 * functions and bounded whatever came: at most MAX_CNAME_LINKS links, each
 * name shown as a certificate's names are (shownText: control characters and
 * bidi overrides replaced by U+FFFD, at most 320 characters, room for a
 * 253-character name; c-ares writes an odd byte as \DDD), at most MAX_ANSWERS_PER_FAMILY records of
 * each family (the rest counted), at most MAX_SERVERS servers listed.
 */
import { type CnameChain, type CnameChainEnd, MAX_CNAME_LINKS, NO_CNAME_WALK } from "./cname-chain.js";
import { shownText } from "./connect/certificate-text.js";
import type { DnssecReading, DnssecState } from "./dnssec-query.js";
import type { ExtendedDnsError } from "./extended-dns-error.js";
import type { AnsweredRecord, Resolution, ResolverSource } from "./resolver.js";

/** Records kept of each family: more than any real site's, and 500 A records cost no more than these. */
export const MAX_ANSWERS_PER_FAMILY = 32;
/** Servers listed of a resolver (resolv.conf allows three; SITEDIAG_DNS_SERVERS a handful). */
export const MAX_SERVERS = 8;

/** The question asked of every name: both families, as a browser asks. */
export const QUESTION_TYPES: readonly ("A" | "AAAA")[] = Object.freeze(["A", "AAAA"] as const);

export interface NameResolution {
  /** The name asked, as the URL has it (lower-case, no trailing dot), bounded and escaped. */
  readonly name: string;
  /** Who answered: the hosts file (its path), or the DNS servers asked (configured or the system's), listed. */
  readonly source: ResolverSource;
  /** The CNAME targets in order, the question's own first; [] when the name has none (or a hosts file answered). */
  readonly cnameChain: readonly string[];
  readonly cnameChainEnd: CnameChainEnd;
  /** A records, then AAAA, in the order they came, the first MAX_ANSWERS_PER_FAMILY of each; ttl in seconds (null from a hosts file). */
  readonly answers: readonly AnsweredRecord[];
  /** Records left out past MAX_ANSWERS_PER_FAMILY. */
  readonly answersOmitted: number;
  /** The DNS phase of the request that resolved it (its timings.dnsMs): ms, multiples of 0.1. */
  readonly timeMs: number;
  /** On failure, the code of the failure table (dns_no_such_host, dns_server_failure, dns_query_refused, dns_timeout, dns_no_address ...); null when it resolved. */
  readonly code: string | null;
  /** On failure, the server's response code (NXDOMAIN, SERVFAIL, REFUSED, NOERROR for no data ...); null when no server said (a timeout) or it resolved. */
  readonly rcode: string | null;
  /** What the resolver said of the name's DNSSEC (dnssec-query.ts): asked for a diagnostic's first host only; "unknown" for every other, and for a hosts-file answer. */
  readonly dnssec: DnssecState;
  /** The Extended DNS Errors of that answer (RFC 8914), at most 4, texts bounded and escaped; [] when none or not asked. */
  readonly extendedErrors: readonly ExtendedDnsError[];
}

/**
 * The record of `host`'s resolution. `failureCode` is the code its request
 * failed with when the lookup failed; `timeMs` the request's DNS phase.
 * Null for a lookup that shows nothing (cancelled before any answer).
 */
export function nameResolutionOf(
  host: string,
  resolution: Resolution,
  chain: CnameChain,
  dnssec: DnssecReading,
  timeMs: number,
  failureCode: string | null,
): NameResolution | null {
  const evidence = resolution.ok ? resolution.evidence : "evidence" in resolution ? resolution.evidence : undefined;
  if (evidence === undefined) return null;
  const v4 = evidence.records.filter(({ family }) => family === 4);
  const v6 = evidence.records.filter(({ family }) => family === 6);
  const kept = [...v4.slice(0, MAX_ANSWERS_PER_FAMILY), ...v6.slice(0, MAX_ANSWERS_PER_FAMILY)];
  const walked = evidence.source.kind === "hosts_file" ? NO_CNAME_WALK : chain;
  return {
    name: shownText(host),
    source: shownSource(evidence.source),
    cnameChain: walked.links.slice(0, MAX_CNAME_LINKS).map(shownText),
    cnameChainEnd: walked.end,
    answers: kept.map(({ address, family, ttl }) => ({ address: shownText(address), family, ttl: ttl === null ? null : boundedTtl(ttl) })),
    answersOmitted: evidence.records.length - kept.length,
    timeMs,
    code: resolution.ok ? null : failureCode,
    rcode: resolution.ok ? null : evidence.rcode,
    dnssec: evidence.source.kind === "hosts_file" ? "unknown" : dnssec.state,
    extendedErrors: evidence.source.kind === "hosts_file" ? [] : dnssec.extendedErrors.map((error) => Object.assign({}, error)),
  };
}

function shownSource(source: ResolverSource): ResolverSource {
  if (source.kind === "hosts_file") return { kind: "hosts_file", path: shownText(source.path) };
  return { kind: source.kind, servers: source.servers.slice(0, MAX_SERVERS).map(shownText) };
}

/** A TTL is an unsigned 32-bit field; anything else c-ares could hand over reads as 0. */
function boundedTtl(ttl: number): number {
  return Number.isInteger(ttl) && ttl >= 0 ? Math.min(ttl, 2_147_483_647) : 0;
}
