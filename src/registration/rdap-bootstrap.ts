/**
 * IANA's RDAP bootstrap registry for domains (RFC 9224, dns.json): which RDAP
 * service answers for which top-level domain. The shipped short list
 * (third_party/iana/rdap-dns.json) or SITEDIAG_RDAP_BOOTSTRAP_FILE, read once,
 * bounded: at most MAX_BOOTSTRAP_BYTES of file and MAX_BOOTSTRAP_NAMES names;
 * what lies past those bounds, or is not the format, is left out, never a throw.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../package-info.js";

/** The real file is about 100 KB; a file many times that is not a bootstrap registry. */
export const MAX_BOOTSTRAP_BYTES = 4 * 1024 * 1024;
/** Names kept (the real registry has about 1,200). */
export const MAX_BOOTSTRAP_NAMES = 20_000;

/** Domain suffix (lower-case, no dots at the ends) to the service's base URL, ending in "/". */
export type RdapBootstrap = ReadonlyMap<string, string>;

export const SHIPPED_BOOTSTRAP_FILE = (): string => join(packageRoot(), "third_party", "iana", "rdap-dns.json");

const loaded = new Map<string, RdapBootstrap>();

/** The registry of `file` (the shipped one when undefined), read once per process; an unreadable file is an empty registry. */
export function rdapBootstrap(file: string | undefined): RdapBootstrap {
  const path = file ?? SHIPPED_BOOTSTRAP_FILE();
  const known = loaded.get(path);
  if (known !== undefined) return known;
  let table: RdapBootstrap;
  try {
    const bytes = readFileSync(path);
    table = bytes.length > MAX_BOOTSTRAP_BYTES ? new Map() : parseRdapBootstrap(bytes.toString("utf8"));
  } catch {
    table = new Map();
  }
  loaded.set(path, table);
  return table;
}

/**
 * The `services` of a dns.json: [[names...], [urls...]] each. The first
 * https URL of a service is its base (RFC 9224 §3: prefer https; we never
 * ask over http); a service without one is left out, as is every name past
 * MAX_BOOTSTRAP_NAMES. A name listed twice keeps its first service.
 */
export function parseRdapBootstrap(text: string): RdapBootstrap {
  const table = new Map<string, string>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return table;
  }
  const services =
    typeof parsed === "object" && parsed !== null && "services" in parsed && Array.isArray(parsed.services)
      ? (parsed.services as unknown[])
      : [];
  for (const service of services) {
    if (!Array.isArray(service) || !Array.isArray(service[0]) || !Array.isArray(service[1])) continue;
    const base = (service[1] as unknown[]).find((url): url is string => typeof url === "string" && httpsBase(url) !== null);
    if (base === undefined) continue;
    for (const name of service[0] as unknown[]) {
      if (table.size >= MAX_BOOTSTRAP_NAMES) return table;
      if (typeof name !== "string" || name.length === 0 || name.length > 253) continue;
      const key = name.toLowerCase().replace(/^\.+|\.+$/g, "");
      if (!table.has(key)) table.set(key, httpsBase(base) ?? base);
    }
  }
  return table;
}

/** An https URL with a path ending in "/" (added when missing), no query or fragment; null for anything else. */
function httpsBase(text: string): string | null {
  if (text.length > 2_048) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" || url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") return null;
  return url.href.endsWith("/") ? url.href : `${url.href}/`;
}

/** The service for `domain`: its longest suffix the registry names (RFC 9224 §4); null when none. */
export function rdapServiceFor(bootstrap: RdapBootstrap, domain: string): string | null {
  const labels = domain.toLowerCase().split(".");
  for (let start = 0; start < labels.length; start++) {
    const base = bootstrap.get(labels.slice(start).join("."));
    if (base !== undefined) return base;
  }
  return null;
}
