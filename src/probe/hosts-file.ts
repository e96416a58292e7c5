import { readFile, stat } from "node:fs/promises";
import { isIP } from "node:net";
import type { ResolvedAddress } from "./resolution-types.js";

/** Answers from a hosts file, by lower-case name without a trailing dot. */
export type HostsTable = ReadonlyMap<string, readonly ResolvedAddress[]>;

/**
 * Parses hosts(5): an address, then names, `#` to the end of a line a
 * comment. Lines whose first field is not an IP literal are skipped, as the
 * C library skips them; a name listed twice collects every address, in file
 * order, as getaddrinfo returns them.
 */
export function parseHostsFile(text: string): HostsTable {
  const table = new Map<string, ResolvedAddress[]>();
  for (const line of text.split(/\r?\n/)) {
    const [address, ...names] = (line.split("#", 1)[0] ?? "").trim().split(/\s+/);
    if (address === undefined || names.length === 0) continue;
    const family = isIP(address);
    if (family === 0) continue;
    for (const name of names) {
      const key = normaliseName(name);
      const entries = table.get(key) ?? [];
      if (!entries.some((entry) => entry.address === address)) entries.push({ address, family: family === 6 ? 6 : 4 });
      table.set(key, entries);
    }
  }
  return table;
}

export function normaliseName(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}

// The C library reads the file on every lookup; re-reading at most this often keeps edits visible without a read per check.
const RECHECK_MS = 2_000;

/**
 * The hosts file as the system consults it before DNS, re-read when its
 * modification time changes. A missing or unreadable file is an empty table:
 * the system resolver carries on with DNS in that case too.
 */
export function watchedHostsFile(path: string): () => Promise<HostsTable> {
  let table: HostsTable = new Map();
  let loadedMtimeMs = -1;
  let checkedAt = -Infinity;
  let pending: Promise<HostsTable> | undefined;

  const refresh = async (): Promise<HostsTable> => {
    try {
      const { mtimeMs } = await stat(path);
      if (mtimeMs !== loadedMtimeMs) {
        table = parseHostsFile(await readFile(path, "utf8"));
        loadedMtimeMs = mtimeMs;
      }
    } catch {
      table = new Map();
      loadedMtimeMs = -1;
    }
    checkedAt = performance.now();
    return table;
  };

  return () => {
    if (performance.now() - checkedAt < RECHECK_MS) return Promise.resolve(table);
    pending ??= refresh().finally(() => {
      pending = undefined;
    });
    return pending;
  };
}
