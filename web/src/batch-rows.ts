import type {
  CheckSiteResponse,
  CheckSitesResponse,
  TraceRedirectsBatchResponse,
  TraceRedirectsResponse,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type BatchRecord, batchCsv, checkRecord, notRunRecord, refusedAtInput, traceRecord } from "../../src/shared/batch-verdict.js";
import type { BatchEntry } from "./batch-input.js";

/** What a finished row opens to: the item's own answer, drawn by the single-URL renderers. */
export type RowResult =
  | { readonly kind: "check"; readonly value: CheckSiteResponse }
  | { readonly kind: "trace"; readonly value: TraceRedirectsResponse };

/**
 * One line of the batch table. Its record is what the table shows and the
 * CSV writes, judged by the batch verdict every report shares
 * (src/shared/batch-verdict.ts); a row is waiting until its item streams in, and
 * NOT RUN when the batch was refused or stopped before it.
 */
export interface BatchRow {
  readonly index: number;
  readonly entry: BatchEntry;
  readonly state: "waiting" | "done" | "not run";
  readonly record: BatchRecord;
  readonly result: RowResult | undefined;
}

export function waitingRow(index: number, entry: BatchEntry): BatchRow {
  return {
    index,
    entry,
    state: "waiting",
    record: notRunRecord(index, entry.url, entry.expectedFinalUrl, "waiting", entry.maxRedirects),
    result: undefined,
  };
}

/** A streamed CheckSites item. `index` is the row's place in the table (a re-run sends only some rows). */
export function checkRow(previous: BatchRow, item: CheckSitesResponse): BatchRow {
  const record = { ...checkRecord(item), index: previous.index, expectedFinalUrl: previous.entry.expectedFinalUrl ?? "" };
  const result: RowResult | undefined = item.outcome.case === "result" ? { kind: "check", value: item.outcome.value } : undefined;
  return { ...previous, state: "done", record, result };
}

/** A streamed trace, judged against the row's expected final URL. */
export function traceRow(previous: BatchRow, item: TraceRedirectsBatchResponse): BatchRow {
  // The record keeps the limit the item was held to (the row's, or the batch's), as the server echoed it.
  const record = { ...traceRecord(item, previous.entry.expectedFinalUrl, item.maxRedirects), index: previous.index };
  const result: RowResult | undefined = item.outcome.case === "result" ? { kind: "trace", value: item.outcome.value } : undefined;
  return { ...previous, state: "done", record, result };
}

/** A row still waiting when the batch ended without it: it never ran, and says why. */
export function notRunRow(previous: BatchRow, reason: string): BatchRow {
  if (previous.state !== "waiting") return previous;
  return {
    ...previous,
    state: "not run",
    record: notRunRecord(previous.index, previous.entry.url, previous.entry.expectedFinalUrl, reason, previous.entry.maxRedirects),
  };
}

/** A row that needs a look: it failed, or it never ran. */
export function needsLook(row: BatchRow): boolean {
  return row.state !== "waiting" && row.record.verdict !== "PASS";
}

/** A row to run again: it needs a look, and unless `includeRefused`, its URL was not refused at input (it cannot run as written). */
export function runsAgain(row: BatchRow, includeRefused: boolean): boolean {
  return needsLook(row) && (includeRefused || row.state !== "done" || !refusedAtInput(row.record.code));
}

/** The rows as a CSV file, in the order they were given (src/shared/batch-verdict.ts writes the CLI's too). */
export function csvOf(rows: readonly BatchRow[]): string {
  return batchCsv(rows.map((row) => row.record));
}
