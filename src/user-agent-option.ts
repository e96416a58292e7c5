import { UserAgent } from "../gen/sitediag/v1/diagnostics_pb.js";
import type { UserAgentId } from "./user-agents.js";

// The request's user_agent (an enum on every door) as the diagnostics' option.

const IDS: ReadonlyMap<number, UserAgentId | null> = new Map([
  [UserAgent.UNSPECIFIED, null],
  [UserAgent.BROWSER, null],
  [UserAgent.GOOGLEBOT, "googlebot"],
  [UserAgent.BINGBOT, "bingbot"],
]);

/** True for a value the enum has (proto3 enums are open: any number may arrive over gRPC, and the REST door sends an unknown text as -1). */
export function isKnownUserAgent(value: number): boolean {
  return IDS.has(value);
}

/**
 * The options' `userAgent` for a request's value: none at all for the
 * default (browser), so a call without it, and the job a vantage is sent,
 * stay exactly what they were.
 */
export function userAgentOption(value: UserAgent | undefined): { readonly userAgent?: UserAgentId } {
  const id = value === undefined ? null : (IDS.get(value) ?? null);
  return id === null ? {} : { userAgent: id };
}
