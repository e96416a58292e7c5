import { isIP } from "node:net";
import { refusal, type PolicyRefusal } from "../failures.js";
import { MAX_URL_LENGTH } from "../limits.js";
import { refusedAddressDetail, type AddressPolicy } from "./address-policy.js";
import { FETCH_BAD_PORTS } from "./bad-ports.js";
import type { PortRule } from "./hop-types.js";

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
    if (!verdict.allowed) return refusal("INPUT_NON_PUBLIC_ADDRESS", `Target ${verdict.address} is ${refusedAddressDetail(verdict)}`, verdict.range);
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
