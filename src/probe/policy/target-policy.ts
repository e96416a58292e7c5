import { isIP } from "node:net";
import { refusal, type PolicyRefusal } from "../../shared/failures.js";
import { MAX_URL_LENGTH } from "../../shared/limits.js";
import { refusedAddressDetail, type AddressPolicy } from "./address-policy.js";
import type { PortRule } from "../hop-types.js";

/**
 * Everything about a URL that can be decided before any DNS query. The host is
 * always the WHATWG parser's (so 0x7f.1, 2130706433, full-width digits and
 * percent-escapes have already become 127.0.0.1), never the raw input.
 */
export function screenUrl(url: URL, ports: PortRule, addresses: AddressPolicy): PolicyRefusal | null {
  if (url.href.length > MAX_URL_LENGTH) {
    return refusal("INPUT_URL_TOO_LONG");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return refusal("INPUT_SCHEME", `Scheme ${url.protocol.slice(0, -1)} is not allowed; only http and https are`);
  }
  if (url.username !== "" || url.password !== "") {
    return refusal("INPUT_CREDENTIALS");
  }
  const port = effectivePort(url);
  if (ports.kind === "only" && !ports.ports.includes(port)) {
    return refusal("INPUT_PORT", `Port ${port} is not allowed; allowed ports: ${ports.ports.join(", ")}`);
  }
  if (ports.kind === "fetch-safe" && FETCH_BAD_PORTS.has(port)) {
    return refusal("INPUT_BAD_PORT", `Port ${port} is blocked (a WHATWG Fetch bad port)`);
  }
  const host = hostOf(url);
  if (isIP(host) !== 0) {
    const verdict = addresses.judge(host);
    if (!verdict.allowed)
      return refusal("INPUT_NON_PUBLIC_ADDRESS", `Target ${verdict.address} is ${refusedAddressDetail(verdict)}`, verdict.range);
  }
  return null;
}

/** The port the request goes to: explicit, else the scheme's default. */
export function effectivePort(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

/** The host without IPv6 brackets, as the parser normalised it. */
export function hostOf(url: URL): string {
  const host = url.hostname;
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/**
 * The WHATWG Fetch Standard's "bad ports" (§2.9 "Port blocking"): ports of
 * protocols that browsers refuse to speak HTTP to, because a request there can
 * be turned against a mail, chat or file server. Port 0 is not in the list but
 * is refused too: nothing can be dialled there.
 */
export const FETCH_BAD_PORTS: ReadonlySet<number> = new Set([
  0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117,
  119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636,
  989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);
