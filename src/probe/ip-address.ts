import { isIPv4, isIPv6 } from "node:net";

/**
 * An IP address as a number, so ranges are plain integer comparisons and no
 * textual form (compressed, dotted-tail, upper-case) can slip past a rule.
 */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly value: bigint;
}

export interface Cidr {
  readonly family: 4 | 6;
  /** First address of the block. */
  readonly first: bigint;
  readonly prefix: number;
}

/** Parses a bare IPv4 or IPv6 address (no brackets, no zone). Null when it is neither. */
export function parseIp(text: string): IpAddress | null {
  if (isIPv4(text)) return { family: 4, value: parseIpv4(text) };
  if (isIPv6(text) && !text.includes("%")) return { family: 6, value: parseIpv6(text) };
  return null;
}

/** Parses "a.b.c.d/n" or "x::/n"; throws on anything else (tables and config are checked at start-up). */
export function parseCidr(text: string): Cidr {
  const [address, prefixText, ...rest] = text.split("/");
  const ip = address === undefined ? null : parseIp(address);
  const bits = ip?.family === 6 ? 128 : 32;
  const prefix = Number(prefixText);
  if (ip === null || rest.length > 0 || prefixText === undefined || !/^\d+$/.test(prefixText) || prefix > bits) {
    throw new Error(`not a CIDR: ${text}`);
  }
  return { family: ip.family, first: ip.value & mask(bits, prefix), prefix };
}

export function cidrContains(cidr: Cidr, ip: IpAddress): boolean {
  if (cidr.family !== ip.family) return false;
  const bits = ip.family === 6 ? 128 : 32;
  return (ip.value & mask(bits, cidr.prefix)) === cidr.first;
}

/** The last address of a block (for tests at the upper edge). */
export function cidrLast(cidr: Cidr): bigint {
  const bits = cidr.family === 6 ? 128 : 32;
  return cidr.first | (~mask(bits, cidr.prefix) & ((1n << BigInt(bits)) - 1n));
}

export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) {
    return [24n, 16n, 8n, 0n].map((shift) => String((ip.value >> shift) & 0xffn)).join(".");
  }
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((ip.value >> shift) & 0xffffn).toString(16));
  // Node's own serialiser gives the canonical compressed form (RFC 5952).
  return new URL(`http://[${groups.join(":")}]/`).hostname.slice(1, -1);
}

function mask(bits: number, prefix: number): bigint {
  const all = (1n << BigInt(bits)) - 1n;
  return prefix === 0 ? 0n : (all >> BigInt(bits - prefix)) << BigInt(bits - prefix);
}

function parseIpv4(text: string): bigint {
  return text.split(".").reduce((value, octet) => (value << 8n) | BigInt(Number(octet)), 0n);
}

function parseIpv6(text: string): bigint {
  // A dotted IPv4 tail ("::ffff:1.2.3.4") stands for the last two groups.
  const lastColon = text.lastIndexOf(":");
  const tail = text.slice(lastColon + 1);
  let head = text;
  if (tail.includes(".")) {
    const v4 = parseIpv4(tail);
    head = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [left = "", right] = head.split("::");
  const leftGroups = left === "" ? [] : left.split(":");
  const rightGroups = right === undefined || right === "" ? [] : right.split(":");
  const missing = 8 - leftGroups.length - rightGroups.length;
  const groups = right === undefined ? leftGroups : [...leftGroups, ...Array<string>(missing).fill("0"), ...rightGroups];
  return groups.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}
