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
  /** The block's network mask, worked out once: every address judged is tested against every row. */
  readonly mask: bigint;
}

/*
 * Every check judges its target two or three times (the input, each DNS
 * answer, the connected peer), and a public address is tested against every
 * row of the table. So parsing builds one bigint per address from plain
 * numbers, masks are kept with their block, and formatting never goes
 * through a URL, where most of judging an address went before
 * (docs/benchmarks.md).
 */

/** Parses a bare IPv4 or IPv6 address (no brackets, no zone). Null when it is neither. */
export function parseIp(text: string): IpAddress | null {
  if (isIPv4(text)) return { family: 4, value: BigInt(ipv4Number(text)) };
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
  const blockMask = mask(bits, prefix);
  return { family: ip.family, first: ip.value & blockMask, prefix, mask: blockMask };
}

export function cidrContains(cidr: Cidr, ip: IpAddress): boolean {
  return cidr.family === ip.family && (ip.value & cidr.mask) === cidr.first;
}

/** The last address of a block (for tests at the upper edge). */
export function cidrLast(cidr: Cidr): bigint {
  const bits = cidr.family === 6 ? 128 : 32;
  return cidr.first | (~cidr.mask & ((1n << BigInt(bits)) - 1n));
}

/** The canonical text of an address: dotted IPv4, or IPv6 as a URL serialises its host (WHATWG, RFC 5952's compression). */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) {
    const n = Number(ip.value);
    return `${n >>> 24}.${(n >>> 16) & 0xff}.${(n >>> 8) & 0xff}.${n & 0xff}`;
  }
  const groups = ipv6Groups(ip.value);
  // The first longest run of two or more zero groups becomes "::".
  let runStart = -1;
  let runLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i += 1;
      continue;
    }
    let end = i;
    while (end < 8 && groups[end] === 0) end += 1;
    if (end - i > runLength) {
      runStart = i;
      runLength = end - i;
    }
    i = end;
  }
  const hex = (from: number, to: number) =>
    groups
      .slice(from, to)
      .map((group) => group.toString(16))
      .join(":");
  if (runStart < 0) return hex(0, 8);
  return `${hex(0, runStart)}::${hex(runStart + runLength, 8)}`;
}

function mask(bits: number, prefix: number): bigint {
  const all = (1n << BigInt(bits)) - 1n;
  return prefix === 0 ? 0n : (all >> BigInt(bits - prefix)) << BigInt(bits - prefix);
}

/** A dotted quad node:net already accepted, as an unsigned 32-bit number. */
function ipv4Number(text: string): number {
  let value = 0;
  let octet = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 0x2e) {
      value = value * 256 + octet;
      octet = 0;
    } else {
      octet = octet * 10 + (code - 0x30);
    }
  }
  return value * 256 + octet;
}

function parseIpv6(text: string): bigint {
  // A dotted IPv4 tail ("::ffff:1.2.3.4") stands for the last two groups.
  const lastColon = text.lastIndexOf(":");
  const tail = text.slice(lastColon + 1);
  let head = text;
  if (tail.includes(".")) {
    const v4 = ipv4Number(tail);
    head = `${text.slice(0, lastColon + 1)}${Math.floor(v4 / 0x10000).toString(16)}:${(v4 % 0x10000).toString(16)}`;
  }
  const [left = "", right] = head.split("::");
  const leftGroups = left === "" ? [] : left.split(":");
  const rightGroups = right === undefined || right === "" ? [] : right.split(":");
  const missing = 8 - leftGroups.length - rightGroups.length;
  const groups = right === undefined ? leftGroups : [...leftGroups, ...Array<string>(missing).fill("0"), ...rightGroups];
  // Four 32-bit halves as plain numbers, then one bigint.
  let value = 0n;
  for (let i = 0; i < 8; i += 2)
    value = (value << 32n) | BigInt(parseInt(groups[i] ?? "0", 16) * 0x10000 + parseInt(groups[i + 1] ?? "0", 16));
  return value;
}

function ipv6Groups(value: bigint): number[] {
  const groups: number[] = [];
  for (let shift = 96n; shift >= 0n; shift -= 32n) {
    const half = Number((value >> shift) & 0xffffffffn);
    groups.push(Math.floor(half / 0x10000), half % 0x10000);
  }
  return groups;
}
