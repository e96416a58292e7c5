import { UserAgent } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { isUserAgentId, type UserAgentId } from "./user-agents.js";
import { userAgentCause } from "./failures.js";

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

/** The request's value for an id, as the CLI builds requests. */
export function userAgentValue(id: UserAgentId): UserAgent {
  return id === "googlebot" ? UserAgent.GOOGLEBOT : id === "bingbot" ? UserAgent.BINGBOT : UserAgent.BROWSER;
}

/** `--user-agent TEXT` of the CLI: the id, or the input_user_agent sentence; `browser` when not given. */
export function userAgentFromText(
  text: string | undefined,
): { readonly ok: true; readonly id: UserAgentId } | { readonly ok: false; readonly problem: string } {
  if (text === undefined) return { ok: true, id: "browser" };
  return isUserAgentId(text)
    ? { ok: true, id: text }
    : { ok: false, problem: `--user-agent ${JSON.stringify(text)}: ${userAgentCause().reason.replace(/^user_agent /, "")}` };
}

/** The diagnostics' option for an id: nothing for browser. */
export function userAgentOptionOf(id: UserAgentId): { readonly userAgent?: UserAgentId } {
  return id === "browser" ? {} : { userAgent: id };
}
