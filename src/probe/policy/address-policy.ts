import { IPV4_EMBEDDING_RANGES, IPV4_RANGES, IPV6_RANGES, type AddressRange, type EmbeddingRange } from "./address-ranges.js";
import { cidrContains, formatIp, parseCidr, parseIp, type Cidr, type IpAddress } from "./ip-address.js";

/** Why an address may or may not be dialled. */
export type AddressVerdict =
  | {
      readonly allowed: true;
      readonly address: string;
      readonly by: "public" | "allow-cidr" | "range";
      readonly range: AddressRange | null;
    }
  | { readonly allowed: false; readonly address: string; readonly range: AddressRange | null; readonly via: EmbeddingRange | null };

export interface AddressPolicy {
  /** Judges one IP address (bare, no brackets). A string that is not an IP address is refused. */
  judge(address: string): AddressVerdict;
}

interface CompiledRow<Row> {
  readonly cidr: Cidr;
  readonly row: Row;
}

type Match = { readonly kind: "plain"; readonly row: AddressRange } | { readonly kind: "embedding"; readonly row: EmbeddingRange };

/**
 * The table plus the deployment's allow list. `allowCidrs` (SITEDIAG_ALLOW_CIDRS)
 * is the only thing that widens the table; it is checked both on the address
 * and, for IPv6 forms carrying IPv4, on the IPv4 inside.
 */
export function createAddressPolicy(allowCidrs: readonly string[]): AddressPolicy {
  const allow = allowCidrs.map(parseCidr);
  const plain = [...IPV4_RANGES, ...IPV6_RANGES].map((row) => ({ cidr: parseCidr(row.cidr), row }));
  const embedding = IPV4_EMBEDDING_RANGES.map((row) => ({ cidr: parseCidr(row.cidr), row }));

  function judgeIp(ip: IpAddress, shown: string, via: EmbeddingRange | null): AddressVerdict {
    if (allow.some((cidr) => cidrContains(cidr, ip))) return { allowed: true, address: shown, by: "allow-cidr", range: null };
    const match = mostSpecific(ip, plain, embedding);
    if (match === null) return { allowed: true, address: shown, by: "public", range: null };
    if (match.kind === "embedding") return judgeIp(embeddedIpv4(ip, match.row), shown, match.row);
    if (match.row.allowed) return { allowed: true, address: shown, by: "range", range: match.row };
    return { allowed: false, address: shown, range: match.row, via };
  }

  return {
    judge(address) {
      const ip = parseIp(address);
      if (ip === null) return { allowed: false, address, range: null, via: null };
      return judgeIp(ip, formatIp(ip), null);
    },
  };
}

/** "not a public address (Private-Use, RFC 1918)": what a refused verdict says about its address. */
export function refusedAddressDetail(verdict: AddressVerdict & { readonly allowed: false }): string {
  if (verdict.range === null) return "not an IP address";
  const via = verdict.via === null ? "" : `, carried in an ${verdict.via.name}`;
  return `not a public address (${verdict.range.name}, ${verdict.range.source}${via})`;
}

function mostSpecific(
  ip: IpAddress,
  plain: readonly CompiledRow<AddressRange>[],
  embedding: readonly CompiledRow<EmbeddingRange>[],
): Match | null {
  let best: { prefix: number; match: Match } | null = null;
  for (const { cidr, row } of plain) {
    if (cidrContains(cidr, ip) && (best === null || cidr.prefix > best.prefix))
      best = { prefix: cidr.prefix, match: { kind: "plain", row } };
  }
  for (const { cidr, row } of embedding) {
    if (cidrContains(cidr, ip) && (best === null || cidr.prefix > best.prefix))
      best = { prefix: cidr.prefix, match: { kind: "embedding", row } };
  }
  return best?.match ?? null;
}

function embeddedIpv4(ip: IpAddress, range: EmbeddingRange): IpAddress {
  const shift = range.embedding === "6to4" ? 80n : 0n;
  return { family: 4, value: (ip.value >> shift) & 0xffffffffn };
}
