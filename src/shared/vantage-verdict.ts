// The one rule that turns the entries of a call from several vantages into
// its verdict. The service (every door), the CLI and the page all read it
// here, so "down in some" means the same thing wherever it is shown.

/** The verdict over the vantages of one call (docs/vantages.md, "Verdicts and costs"). */
export type VantageVerdictId =
  | "up_everywhere"
  | "down_everywhere"
  | "down_in_some"
  | "blocked_in_some"
  | "unavailable"
  | "up_where_answered"
  | "down_where_answered";

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
export function siteCheckReading(result: {
  readonly status: "up" | "down";
  readonly statusCode: number | null;
  readonly proxyBlocked: boolean;
}): VantageReading {
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
 * target). A verdict never claims more than was seen: "everywhere" only when
 * every vantage asked has a reading. The whole table (docs/vantages.md):
 *
 *   readings of those that answered       every one answered    some did not
 *   none                                  -                     unavailable
 *   all up (or all the same 403/451)      up_everywhere         up_where_answered
 *   all down                              down_everywhere       down_where_answered
 *   some down, the others up or blocked   down_in_some          down_in_some
 *   none down, some blocked, some up      blocked_in_some       blocked_in_some
 *
 * "In some" is true whoever else was silent; the entries name the silent ones.
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
  const answered = up + down + blocked;
  if (answered === 0) return "unavailable";
  const everyOne = answered === readings.length;
  if (down > 0) {
    if (up + blocked > 0) return "down_in_some";
    return everyOne ? "down_everywhere" : "down_where_answered";
  }
  if (blocked > 0 && up > 0) return "blocked_in_some";
  return everyOne ? "up_everywhere" : "up_where_answered";
}

/** Whether a verdict is a reason to look (the CLI's exit status): anything but up everywhere. */
export function verdictNeedsALook(verdict: VantageVerdictId): boolean {
  return verdict !== "up_everywhere";
}

/**
 * How a verdict is shown (the page's colour, the CLI's paint): `good` only
 * for up everywhere; `bad` where some vantage read down; `unsure` (amber)
 * where none read down but the picture is not whole: a block in some, or
 * vantages that did not answer.
 */
export function verdictTone(verdict: VantageVerdictId): "good" | "bad" | "unsure" {
  switch (verdict) {
    case "up_everywhere":
      return "good";
    case "down_everywhere":
    case "down_in_some":
    case "down_where_answered":
      return "bad";
    case "blocked_in_some":
    case "up_where_answered":
    case "unavailable":
      return "unsure";
  }
}
