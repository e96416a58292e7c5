/** What resolving a target name gives: the contract between the resolver, the hosts file and the hop. */

import type { AbortWatch } from "./deadline.js";

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

export type Resolution =
  | { readonly ok: true; readonly addresses: readonly ResolvedAddress[] }
  /** `code` is the resolver's own error code: ENOTFOUND, ENODATA, ESERVFAIL, EREFUSED, ETIMEOUT, EAI_AGAIN ... */
  | { readonly ok: false; readonly code: string }
  | { readonly ok: false; readonly code: "ABORTED" };

/** Turns a host name into every A and AAAA address, once; the caller pins what it gets. */
export interface Resolver {
  resolve(host: string, signal: AbortWatch): Promise<Resolution>;
}
