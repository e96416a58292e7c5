import { resolve } from "node:path";
import type { StoreLocation } from "../config.js";

// How to name a store to a person, and how to reach the same one from a
// shell: the start-up hint's `keys create` must write where the running
// service reads, which an unset SITEDIAG_STORE (the local SQLite file) is not
// when the service runs on Redis. A password is never printed: it stands as
// <password>, for the person to fill in as the service's own.

export interface StoreHint {
  /** The store in words: "the SQLite file /srv/data/sitediag.db", "Redis at redis://host:6379/0". */
  readonly where: string;
  /** The environment assignment that reaches it, ready to precede a command (`SITEDIAG_STORE='...'`). */
  readonly env: string;
}

export function storeHint(location: StoreLocation, cwd = process.cwd()): StoreHint {
  switch (location.kind) {
    case "sqlite": {
      // Absolute, so the command reaches the same file from any directory.
      const path = resolve(cwd, location.path);
      return { where: `the SQLite file ${path}`, env: `SITEDIAG_STORE=${shellQuoted(`sqlite:${path}`)}` };
    }
    case "redis": {
      const shown = withoutPassword(location.url);
      return { where: `Redis at ${shown}`, env: `SITEDIAG_STORE=${shellQuoted(shown)}` };
    }
    case "redis-cluster": {
      const nodes = location.nodes.map((node) => `${node.host.includes(":") ? `[${node.host}]` : node.host}:${node.port}`).join(",");
      const shown = `redis+cluster://${location.password === undefined ? "" : ":<password>@"}${nodes}`;
      return { where: `the Redis Cluster at ${nodes}`, env: `SITEDIAG_STORE=${shellQuoted(shown)}` };
    }
  }
}

/** The URL with its password (if any) as `<password>`; the user name stays, it names the ACL user. */
function withoutPassword(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "redis://<the URL of SITEDIAG_STORE>";
  }
  if (parsed.password === "") return url;
  parsed.password = "PASSWORD";
  return parsed.toString().replace(":PASSWORD@", ":<password>@");
}

/** Single-quoted for a POSIX shell: nothing inside is expanded. */
function shellQuoted(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}
