import { ChainStatus, type CheckSitesResponse, SiteStatus, type TraceRedirectsBatchResponse } from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { BatchEntry } from "./batch-input.js";
import { CHAIN_STATUS_TEXT } from "./chain-status.js";

/** One line of the batch table, as the page shows it and writes it to CSV. */
export interface BatchRow {
  readonly index: number;
  readonly url: string;
  readonly expected: string;
  /** "waiting" until its result streams in. */
  readonly outcome: string;
  readonly finalUrl: string;
  readonly status: string;
  /** "met", "not met: <reason>" or "" when no expectation was given. */
  readonly expectation: string;
  readonly failed: boolean;
  readonly done: boolean;
}

export function waitingRow(index: number, entry: BatchEntry): BatchRow {
  return { index, url: entry.url, expected: entry.expectedFinalUrl ?? "", outcome: "waiting", finalUrl: "", status: "", expectation: "", failed: false, done: false };
}

/** A streamed CheckSites item: up or down with its reason, or the item's error (a refused URL). */
export function checkRow(previous: BatchRow, item: CheckSitesResponse): BatchRow {
  const { outcome } = item;
  if (outcome.case === "error") return { ...previous, outcome: `error: ${outcome.value.message}`, failed: true, done: true };
  if (outcome.case !== "result") return { ...previous, outcome: "no result", failed: true, done: true };
  const result = outcome.value;
  const up = result.status === SiteStatus.UP;
  return {
    ...previous,
    outcome: up ? "up" : `down: ${result.reason ?? ""}`.trim(),
    finalUrl: result.finalUrl ?? "",
    status: result.statusCode === undefined ? "" : String(result.statusCode),
    failed: !up,
    done: true,
  };
}

const GOOD_CHAINS = new Set([ChainStatus.HEALTHY, ChainStatus.REDIRECTS_DETECTED]);

/**
 * A streamed trace: its chain status and where it ended, and whether it met
 * its expectation. It failed when it errored, the chain broke, it ended in
 * a 4xx/5xx, or it missed its expectation.
 */
export function traceRow(previous: BatchRow, item: TraceRedirectsBatchResponse): BatchRow {
  const { outcome } = item;
  if (outcome.case === "error") return { ...previous, outcome: `error: ${outcome.value.message}`, failed: true, done: true };
  if (outcome.case !== "result") return { ...previous, outcome: "no result", failed: true, done: true };
  const result = outcome.value;
  const expectation = item.expectation === undefined ? "" : item.expectation.matches ? "met" : `not met: ${item.expectation.reason ?? ""}`.trim();
  const badStatus = result.finalStatus !== undefined && result.finalStatus >= 400;
  return {
    ...previous,
    outcome: `${CHAIN_STATUS_TEXT[result.chainStatus]} (${result.redirects} redirect${result.redirects === 1 ? "" : "s"})`,
    finalUrl: result.finalUrl,
    status: result.finalStatus === undefined ? "" : String(result.finalStatus),
    expectation,
    failed: !GOOD_CHAINS.has(result.chainStatus) || badStatus || item.expectation?.matches === false,
    done: true,
  };
}

/** The rows as a CSV file, in the order they were given. */
export function csvRowsOf(rows: readonly BatchRow[]): string[][] {
  return [
    ["index", "url", "expected_final_url", "outcome", "final_url", "status", "expectation", "failed"],
    ...rows.map((row) => [String(row.index), row.url, row.expected, row.outcome, row.finalUrl, row.status, row.expectation, row.failed ? "yes" : "no"]),
  ];
}
