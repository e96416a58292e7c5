/**
 * The registration of a diagnostic's first host, for details: its registrable
 * domain (the Public Suffix List's ICANN section, through tldts), the RDAP
 * service IANA's bootstrap names for it (rdap-bootstrap.ts), and one GET of
 * `<base>domain/<domain>` over the diagnostic's own prober: the same address
 * policy (SITEDIAG_ALLOW_CIDRS), trust store (SITEDIAG_CA_FILE) and pinned
 * dialling as any check, at most RDAP_TIMEOUT_MS and MAX_RDAP_BYTES. Answers
 * are cached per domain (an hour when found, a minute when not), at most
 * MAX_CACHED domains, shared by every diagnostic of the process (a batch's
 * rows included). Never throws: whatever fails is "unknown", with a reason.
 */
import { isIP } from "node:net";
import { getDomain } from "tldts";
import type { Prober } from "../probe/hop-types.js";
import { MAX_RDAP_BYTES, readRdapDomain, type RegistrationFacts } from "./rdap-answer.js";
import { rdapBootstrap, rdapServiceFor } from "./rdap-bootstrap.js";

export const RDAP_TIMEOUT_MS = 3_000;
export const FOUND_TTL_MS = 60 * 60 * 1_000;
export const UNKNOWN_TTL_MS = 60 * 1_000;
export const MAX_CACHED = 1_000;
/** How long past its own end a diagnostic waits for a lookup still out (started with its first request). */
export const REGISTRATION_GRACE_MS = 250;

export type UnknownReason = "no_service" | "refused" | "timeout" | "too_large" | "http_status" | "invalid_answer" | "failed" | "unfinished";

export type Registration =
  | ({ readonly domain: string; readonly state: "found"; readonly rdapUrl: string } & RegistrationFacts)
  | { readonly domain: string; readonly state: "unknown"; readonly unknownReason: UnknownReason; readonly rdapUrl: string | null };

/** The registrable domain of a host (lower-case); null for an IP literal or a name that is only a public suffix. */
export function registrableDomain(host: string): string | null {
  const bare = host.startsWith("[") ? host.slice(1, -1) : host;
  if (isIP(bare) !== 0) return null;
  return getDomain(bare.toLowerCase(), { allowPrivateDomains: false }) ?? null;
}

interface Cached {
  readonly at: number;
  value: Promise<Registration>;
  ttlMs: number;
}

const cache = new Map<string, Cached>();

/**
 * The registration of `host`'s domain: from the cache, or one lookup started
 * now (and cached at once, so a batch's rows of one domain share it). Null
 * for a host with no registrable domain.
 */
export function lookUpRegistration(
  prober: Prober,
  host: string,
  bootstrapFile: string | undefined,
  now: number = Date.now(),
): PendingRegistration | null {
  const domain = registrableDomain(host);
  if (domain === null) return null;
  const key = `${bootstrapFile ?? ""}\n${domain}`;
  const known = cache.get(key);
  if (known !== undefined && now - known.at < known.ttlMs) return { domain, answer: known.value };
  cache.delete(key);
  // Oldest first out: a Map iterates in insertion order.
  while (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value ?? "");
  const entry: Cached = { at: now, value: Promise.resolve(unknown(domain, "failed", null)), ttlMs: FOUND_TTL_MS };
  entry.value = ask(prober, domain, bootstrapFile).then((registration) => {
    if (registration.state !== "found") entry.ttlMs = UNKNOWN_TTL_MS;
    return registration;
  });
  cache.set(key, entry);
  return { domain, answer: entry.value };
}

export interface PendingRegistration {
  readonly domain: string;
  readonly answer: Promise<Registration>;
}

/** Forgets every cached answer (tests). */
export function clearRegistrationCache(): void {
  cache.clear();
}

/**
 * The lookup's answer when it comes within `graceMs` of now, else "unknown"
 * (unfinished): a diagnostic never waits on a registry longer than that past
 * its own end. The lookup goes on and fills the cache for the next one.
 */
export function registrationWithin(pending: PendingRegistration, graceMs: number = REGISTRATION_GRACE_MS): Promise<Registration> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(unknown(pending.domain, "unfinished", null)), graceMs);
    void pending.answer.then((registration) => {
      clearTimeout(timer);
      resolve(registration);
    });
  });
}

async function ask(prober: Prober, domain: string, bootstrapFile: string | undefined): Promise<Registration> {
  const base = rdapServiceFor(rdapBootstrap(bootstrapFile), domain);
  if (base === null) return unknown(domain, "no_service", null);
  const url = new URL(`domain/${domain}`, base);
  try {
    // One more byte than the bound: an answer that fills it is too large, never read cut.
    const outcome = await prober.hop({
      url,
      method: "GET",
      timeoutMs: RDAP_TIMEOUT_MS,
      ports: { kind: "fetch-safe" },
      bodyPrefixBytes: MAX_RDAP_BYTES + 1,
    });
    if (outcome.kind === "refused") return unknown(domain, "refused", url.href);
    if (outcome.kind === "failure") return unknown(domain, outcome.failure.timedOut ? "timeout" : "failed", url.href);
    if (outcome.kind !== "response") return unknown(domain, "failed", url.href);
    const { status, bodyPrefix } = outcome.response;
    if (status !== 200) return unknown(domain, "http_status", url.href);
    if (bodyPrefix === null) return unknown(domain, "invalid_answer", url.href);
    if (bodyPrefix.length > MAX_RDAP_BYTES) return unknown(domain, "too_large", url.href);
    const facts = readRdapDomain(bodyPrefix);
    return facts === null
      ? unknown(domain, "invalid_answer", url.href)
      : Object.assign({ domain, state: "found" as const, rdapUrl: url.href }, facts);
  } catch {
    // The prober broke (closed at shutdown): details' own extra, never the check's answer.
    return unknown(domain, "failed", url.href);
  }
}

function unknown(domain: string, unknownReason: UnknownReason, rdapUrl: string | null): Registration {
  return { domain, state: "unknown", unknownReason, rdapUrl };
}
