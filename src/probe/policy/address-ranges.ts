/**
 * The target policy's address table, as data. Each row is one block of an
 * IANA registry, with the document that defines it and whether we let probes
 * reach it. The most specific row containing an address decides; an address
 * no row contains is public.
 *
 * Sources (as published in 2025):
 * - IANA IPv4 Special-Purpose Address Registry (RFC 6890, RFC 8190)
 * - IANA IPv4 Multicast Address Space Registry (RFC 5771)
 * - IANA IPv6 Special-Purpose Address Registry (RFC 6890, RFC 8190)
 * - IANA Internet Protocol Version 6 Address Space (RFC 4291): only 2000::/3 is Global Unicast
 * - RFC 4291 §2.5.5.1 (deprecated IPv4-compatible addresses) and RFC 2765 (IPv4-translated)
 */

export type Registry =
  | "iana-ipv4-special-purpose"
  | "iana-ipv4-multicast"
  | "iana-ipv6-special-purpose"
  | "iana-ipv6-address-space"
  | "rfc-4291"
  | "rfc-2765";

export interface AddressRange {
  readonly cidr: string;
  readonly name: string;
  readonly source: string;
  readonly registry: Registry;
  /** The registry's "Globally Reachable" column; null where it says N/A or has no such column. */
  readonly ianaGlobal: boolean | null;
  /** Our decision. Differs from ianaGlobal only where `note` says why. */
  readonly allowed: boolean;
  readonly note?: string;
}

/** Blocks whose addresses carry an IPv4 address: judged as that IPv4 address. */
export interface EmbeddingRange {
  readonly cidr: string;
  readonly name: string;
  readonly source: string;
  readonly registry: Registry;
  /** Where the IPv4 address sits: the low 32 bits, or bits 16..47 (6to4). */
  readonly embedding: "low-32" | "6to4";
}

export const IPV4_RANGES: readonly AddressRange[] = [
  { cidr: "0.0.0.0/8", name: "This network", source: "RFC 791", registry: "iana-ipv4-special-purpose", ianaGlobal: false, allowed: false },
  {
    cidr: "0.0.0.0/32",
    name: "This host on this network",
    source: "RFC 1122",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  { cidr: "10.0.0.0/8", name: "Private-Use", source: "RFC 1918", registry: "iana-ipv4-special-purpose", ianaGlobal: false, allowed: false },
  {
    cidr: "100.64.0.0/10",
    name: "Shared Address Space",
    source: "RFC 6598",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  { cidr: "127.0.0.0/8", name: "Loopback", source: "RFC 1122", registry: "iana-ipv4-special-purpose", ianaGlobal: false, allowed: false },
  {
    cidr: "169.254.0.0/16",
    name: "Link Local",
    source: "RFC 3927",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "172.16.0.0/12",
    name: "Private-Use",
    source: "RFC 1918",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "192.0.0.0/24",
    name: "IETF Protocol Assignments",
    source: "RFC 6890",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "192.0.0.0/29",
    name: "IPv4 Service Continuity Prefix",
    source: "RFC 7335",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "192.0.0.8/32",
    name: "IPv4 dummy address",
    source: "RFC 7600",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "192.0.0.9/32",
    name: "Port Control Protocol Anycast",
    source: "RFC 7723",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: true,
    allowed: false,
    note: "an anycast service address, never a web site: the whole of 192.0.0.0/24 stays refused",
  },
  {
    cidr: "192.0.0.10/32",
    name: "Traversal Using Relays around NAT Anycast",
    source: "RFC 8155",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: true,
    allowed: false,
    note: "an anycast service address, never a web site: the whole of 192.0.0.0/24 stays refused",
  },
  {
    cidr: "192.0.0.170/32",
    name: "NAT64/DNS64 Discovery",
    source: "RFC 8880",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "192.0.0.171/32",
    name: "NAT64/DNS64 Discovery",
    source: "RFC 8880",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "192.0.2.0/24",
    name: "Documentation (TEST-NET-1)",
    source: "RFC 5737",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  { cidr: "192.31.196.0/24", name: "AS112-v4", source: "RFC 7535", registry: "iana-ipv4-special-purpose", ianaGlobal: true, allowed: true },
  { cidr: "192.52.193.0/24", name: "AMT", source: "RFC 7450", registry: "iana-ipv4-special-purpose", ianaGlobal: true, allowed: true },
  {
    cidr: "192.88.99.0/24",
    name: "Deprecated (6to4 Relay Anycast)",
    source: "RFC 7526",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: null,
    allowed: false,
    note: "deprecated relay anycast; refused as the issue requires",
  },
  {
    cidr: "192.88.99.2/32",
    name: "6a44-relay anycast address",
    source: "RFC 6751",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "192.168.0.0/16",
    name: "Private-Use",
    source: "RFC 1918",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "192.175.48.0/24",
    name: "Direct Delegation AS112 Service",
    source: "RFC 7534",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: true,
    allowed: true,
  },
  {
    cidr: "198.18.0.0/15",
    name: "Benchmarking",
    source: "RFC 2544",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "198.51.100.0/24",
    name: "Documentation (TEST-NET-2)",
    source: "RFC 5737",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "203.0.113.0/24",
    name: "Documentation (TEST-NET-3)",
    source: "RFC 5737",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "224.0.0.0/4",
    name: "Multicast",
    source: "RFC 5771",
    registry: "iana-ipv4-multicast",
    ianaGlobal: null,
    allowed: false,
    note: "multicast is never an HTTP server",
  },
  { cidr: "240.0.0.0/4", name: "Reserved", source: "RFC 1112", registry: "iana-ipv4-special-purpose", ianaGlobal: false, allowed: false },
  {
    cidr: "255.255.255.255/32",
    name: "Limited Broadcast",
    source: "RFC 919",
    registry: "iana-ipv4-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
];

export const IPV6_RANGES: readonly AddressRange[] = [
  // Only 2000::/3 is Global Unicast: these three blocks are the rest of the space.
  {
    cidr: "::/3",
    name: "Outside Global Unicast",
    source: "RFC 4291",
    registry: "iana-ipv6-address-space",
    ianaGlobal: null,
    allowed: false,
  },
  {
    cidr: "4000::/2",
    name: "Outside Global Unicast",
    source: "RFC 4291",
    registry: "iana-ipv6-address-space",
    ianaGlobal: null,
    allowed: false,
  },
  {
    cidr: "8000::/1",
    name: "Outside Global Unicast",
    source: "RFC 4291",
    registry: "iana-ipv6-address-space",
    ianaGlobal: null,
    allowed: false,
  },
  {
    cidr: "::1/128",
    name: "Loopback Address",
    source: "RFC 4291",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "::/128",
    name: "Unspecified Address",
    source: "RFC 4291",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "64:ff9b:1::/48",
    name: "IPv4-IPv6 Translat. (local use)",
    source: "RFC 8215",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "100::/64",
    name: "Discard-Only Address Block",
    source: "RFC 6666",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "100:0:0:1::/64",
    name: "Dummy IPv6 Prefix",
    source: "RFC 9780",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "2001::/23",
    name: "IETF Protocol Assignments",
    source: "RFC 2928",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "2001::/32",
    name: "TEREDO",
    source: "RFC 4380",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: null,
    allowed: false,
    note: "a tunnel whose IPv4 end is obfuscated; refused rather than unwrapped",
  },
  {
    cidr: "2001:1::1/128",
    name: "Port Control Protocol Anycast",
    source: "RFC 7723",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: true,
    allowed: true,
  },
  {
    cidr: "2001:1::2/128",
    name: "Traversal Using Relays around NAT Anycast",
    source: "RFC 8155",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: true,
    allowed: true,
  },
  {
    cidr: "2001:1::3/128",
    name: "DNS-SD Service Registration Protocol Anycast",
    source: "RFC 9665",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: true,
    allowed: true,
  },
  {
    cidr: "2001:2::/48",
    name: "Benchmarking",
    source: "RFC 5180",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  { cidr: "2001:3::/32", name: "AMT", source: "RFC 7450", registry: "iana-ipv6-special-purpose", ianaGlobal: true, allowed: true },
  { cidr: "2001:4:112::/48", name: "AS112-v6", source: "RFC 7535", registry: "iana-ipv6-special-purpose", ianaGlobal: true, allowed: true },
  {
    cidr: "2001:10::/28",
    name: "Deprecated (previously ORCHID)",
    source: "RFC 4843",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  { cidr: "2001:20::/28", name: "ORCHIDv2", source: "RFC 7343", registry: "iana-ipv6-special-purpose", ianaGlobal: true, allowed: true },
  {
    cidr: "2001:30::/28",
    name: "Drone Remote ID Protocol Entity Tags (DETs) Prefix",
    source: "RFC 9374",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: true,
    allowed: true,
  },
  {
    cidr: "2001:db8::/32",
    name: "Documentation",
    source: "RFC 3849",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "2620:4f:8000::/48",
    name: "Direct Delegation AS112 Service",
    source: "RFC 7534",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: true,
    allowed: true,
  },
  {
    cidr: "3fff::/20",
    name: "Documentation",
    source: "RFC 9637",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  {
    cidr: "5f00::/16",
    name: "Segment Routing (SRv6) SIDs",
    source: "RFC 9602",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  { cidr: "fc00::/7", name: "Unique-Local", source: "RFC 4193", registry: "iana-ipv6-special-purpose", ianaGlobal: false, allowed: false },
  {
    cidr: "fe80::/10",
    name: "Link-Local Unicast",
    source: "RFC 4291",
    registry: "iana-ipv6-special-purpose",
    ianaGlobal: false,
    allowed: false,
  },
  { cidr: "ff00::/8", name: "Multicast", source: "RFC 4291", registry: "iana-ipv6-address-space", ianaGlobal: null, allowed: false },
];

/**
 * IPv6 blocks that carry an IPv4 address. A more specific plain row (::1,
 * ::) still wins over the embedding, as everywhere in the table.
 */
export const IPV4_EMBEDDING_RANGES: readonly EmbeddingRange[] = [
  { cidr: "::ffff:0:0/96", name: "IPv4-mapped Address", source: "RFC 4291", registry: "iana-ipv6-special-purpose", embedding: "low-32" },
  { cidr: "::/96", name: "IPv4-compatible Address (deprecated)", source: "RFC 4291", registry: "rfc-4291", embedding: "low-32" },
  { cidr: "::ffff:0:0:0/96", name: "IPv4-translated Address", source: "RFC 2765", registry: "rfc-2765", embedding: "low-32" },
  { cidr: "64:ff9b::/96", name: "IPv4-IPv6 Translat.", source: "RFC 6052", registry: "iana-ipv6-special-purpose", embedding: "low-32" },
  { cidr: "2002::/16", name: "6to4", source: "RFC 3056", registry: "iana-ipv6-special-purpose", embedding: "6to4" },
];
