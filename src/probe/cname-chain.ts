import { promises as dns } from "node:dns";
import type { AbortWatch } from "./clock.js";

/** Links followed at most: real chains (a CDN's) have two or three; a longer one is cut here and says so. */
export const MAX_CNAME_LINKS = 8;

/**
 * The whole walk's time, from its first query to its last: a silent server
 * costs details this much at most, never the hop's whole timeout.
 */
export const CNAME_WALK_MS = 1_000;

/**
 * How a walk ended: `complete` (the last name has no CNAME, or does not
 * exist), `too_long` (MAX_CNAME_LINKS links and the last still pointed on:
 * a loop that never repeats a name cut the same way), `loop` (a name came
 * back), `failed` (a query failed or ran out of time: the chain is the part
 * found before), `not_asked` (a hosts-file answer, or the hop ended first).
 */
export type CnameChainEnd = "complete" | "too_long" | "loop" | "failed" | "not_asked";

export interface CnameChain {
  /** The targets in order: the question's CNAME first. Names as c-ares gives them (odd bytes as \DDD), not yet bounded for showing. */
  readonly links: readonly string[];
  readonly end: CnameChainEnd;
}

export const NO_CNAME_WALK: CnameChain = Object.freeze({ links: Object.freeze([]), end: "not_asked" });

/**
 * The CNAME chain above a name, asked of the same servers as its A and AAAA
 * records (c-ares gives the addresses of a CNAME answer, never its links):
 * one CNAME query per link, on a channel of its own, at most
 * MAX_CNAME_LINKS + 1 queries and CNAME_WALK_MS in all, ended at once by
 * `signal`. Asked after the A and AAAA answers came, so its time is not in
 * the DNS phase of any request. Never throws.
 */
export async function walkCnameChain(host: string, servers: readonly string[], signal: AbortWatch): Promise<CnameChain> {
  if (signal.aborted) return NO_CNAME_WALK;
  const links: string[] = [];
  let resolver: dns.Resolver;
  try {
    resolver = new dns.Resolver({ tries: 1, timeout: CNAME_WALK_MS });
    if (servers.length > 0) resolver.setServers([...servers]);
  } catch {
    // Details' own extra: a channel that cannot be made costs the chain, never the hop's answer.
    return { links, end: "failed" };
  }
  const cancel = () => resolver.cancel();
  const timer = setTimeout(cancel, CNAME_WALK_MS);
  signal.addEventListener("abort", cancel, { once: true });
  try {
    return await walk(resolver, host, links);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", cancel);
  }
}

async function walk(resolver: dns.Resolver, host: string, links: string[]): Promise<CnameChain> {
  const seen = new Set([host.toLowerCase()]);
  let name = host;
  for (;;) {
    let targets: string[];
    try {
      targets = await resolver.resolveCname(name);
    } catch (error) {
      // No CNAME here (NOERROR, no data) or no such name (a dangling link): the chain ends at `name`.
      const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
      return { links, end: code === "ENODATA" || code === "ENOTFOUND" ? "complete" : "failed" };
    }
    const next = targets[0];
    if (next === undefined) return { links, end: "complete" };
    if (links.length === MAX_CNAME_LINKS) return { links, end: "too_long" };
    links.push(next);
    const key = next.toLowerCase();
    if (seen.has(key)) return { links, end: "loop" };
    seen.add(key);
    name = next;
  }
}
