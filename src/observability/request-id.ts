import { randomUUID } from "node:crypto";

/** The header that carries a request's id in, and back out on every door. */
export const REQUEST_ID_HEADER = "x-request-id";

// Ids from load balancers and tracing (UUIDs, ULIDs, "Root=1-5e..."): short, printable, no spaces or quotes.
const SANE_ID = /^[A-Za-z0-9][A-Za-z0-9._:=+/-]{0,127}$/;

/**
 * The id of one request: the caller's own x-request-id when it is one value
 * that is safe to log and echo (so a trace spans the caller's systems and
 * ours), otherwise a fresh UUID. A rejected id is dropped, never repaired:
 * it could be an attempt to forge log lines.
 */
export function requestIdFrom(header: string | readonly string[] | undefined): string {
  if (typeof header === "string" && SANE_ID.test(header)) return header;
  return randomUUID();
}
