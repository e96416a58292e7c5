// The one rule that turns the entries of a call from several vantages into
// its verdict. The service (every door), the CLI and the page all read it
// here, so "down in some" means the same thing wherever it is shown.

/** The verdict over the vantages of one call (docs/vantages.md, "Verdicts and costs"). */
export type VantageVerdictId = "up_everywhere" | "down_everywhere" | "down_in_some" | "blocked_in_some" | "unavailable";

/** How one vantage's part of a call ended. */
export type VantageStateId = "done" | "unavailable" | "refused";

/**
 * What one vantage that answered saw of the target: `blocked` is an answer
 * that keeps people out without the site being down (a 403 or 451, a
 * proxy's challenge or block page), which the contract itself counts as up.
 */
export type VantageReading = "up" | "down" | "blocked";

/** Statuses that refuse the visitor rather than fail: forbidden, unavailable for legal reasons. */
const BLOCKING_STATUSES: ReadonlySet<number> = new Set([403, 451]);

/** A site check's reading: its own up/down, with a 403, a 451 or a proxy's 4xx answer read as blocked. */
export function siteCheckReading(result: { readonly status: "up" | "down"; readonly statusCode: number | null; readonly proxyBlocked: boolean }): VantageReading {
  if (result.status === "down") return "down";
  if (result.proxyBlocked || (result.statusCode !== null && BLOCKING_STATUSES.has(result.statusCode))) return "blocked";
  return "up";
}

/**
 * A trace's chain status by its neutral id (ChainStatusId of
 * diagnostics/redirect-trace-result.ts, spelled out here so the page can
 * read this file without the diagnostics' Node-side modules; the service
 * passes ChainStatusId values, so the two cannot drift apart unnoticed).
 */
export type ChainStatusName = "healthy" | "redirects_detected" | "redirect_loop" | "too_many_redirects" | "request_failed" | "timeout";

/** Chain statuses after which nobody reaches a page: the trace reads as down. */
const BROKEN_CHAINS: ReadonlySet<ChainStatusName> = new Set(["redirect_loop", "too_many_redirects", "request_failed", "timeout"]);

/** A trace's reading: a broken chain or a 5xx at its end is down, a 403 or 451 at its end blocked. */
export function traceReading(result: { readonly chainStatus: ChainStatusName; readonly finalStatus: number | null }): VantageReading {
  if (BROKEN_CHAINS.has(result.chainStatus) || result.finalStatus === null || result.finalStatus >= 500) return "down";
  if (BLOCKING_STATUSES.has(result.finalStatus)) return "blocked";
  return "up";
}

/**
 * The verdict over a call's entries, given each one's reading (undefined for
 * an entry that has none: unavailable or refused, which say nothing about the
 * target). Only the entries that answered count:
 * - none answered: `unavailable`;
 * - all down: `down_everywhere`; some down: `down_in_some`;
 * - none down, some blocked while others are up: `blocked_in_some`;
 * - otherwise (all up, or the same refusal everywhere, which the contract
 *   counts as up): `up_everywhere`.
 */
export function vantageVerdict(readings: readonly (VantageReading | undefined)[]): VantageVerdictId {
  let up = 0;
  let down = 0;
  let blocked = 0;
  for (const reading of readings) {
    if (reading === "up") up += 1;
    else if (reading === "down") down += 1;
    else if (reading === "blocked") blocked += 1;
  }
  if (up + down + blocked === 0) return "unavailable";
  if (down > 0) return up + blocked === 0 ? "down_everywhere" : "down_in_some";
  if (blocked > 0 && up > 0) return "blocked_in_some";
  return "up_everywhere";
}

/** Whether a verdict is a reason to look (the CLI's exit status, the page's colour): anything but up everywhere. */
export function verdictNeedsALook(verdict: VantageVerdictId): boolean {
  return verdict !== "up_everywhere";
}
