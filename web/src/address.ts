import type { Operation } from "./service.js";

/**
 * The address bar holds what is being looked at, `/#url=...` for a check and
 * `/#url=...&op=trace` for a trace, so a result can be shared and reloaded
 * as the same question. Only the URL and the operation: the key never goes
 * into the address bar (nor into history or a shared link).
 */
export interface Address {
  readonly url: string;
  readonly operation: Operation;
}

export function addressFromHash(hash: string): Address | undefined {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const url = params.get("url");
  if (url === null || url === "") return undefined;
  return { url, operation: params.get("op") === "trace" ? "trace" : "check" };
}

/** A check's address is the URL alone, as links made before the operation was kept. */
export function hashOf(url: string, operation: Operation): string {
  return `#${new URLSearchParams(operation === "trace" ? { url, op: "trace" } : { url }).toString()}`;
}
