import type { TraceRedirectsBatchResponse } from "../../../gen/sitediag/v1/diagnostics_pb.js";
import type { BatchLine } from "../../shared/batch.js";
import { type BatchRecord, failureCountText, traceRecord } from "../../shared/batch-verdict.js";
import { type Paint, textTable } from "./terminal-text.js";

// `sitediag trace --batch` for people: the verdict of every row by the rule
// the page and both CSVs use (src/shared/batch-verdict.ts).

/** The records of the traced items in file order; `line` gives each row's line (its expected final URL, its limit) by index. */
export function batchRecords(
  items: readonly TraceRedirectsBatchResponse[],
  line: (index: number) => Pick<BatchLine, "expectedFinalUrl" | "maxRedirects"> | undefined,
): BatchRecord[] {
  return [...items]
    .sort((a, b) => a.index - b.index)
    .map((item) => traceRecord(item, line(item.index)?.expectedFinalUrl, line(item.index)?.maxRedirects));
}

/** Rows to look at: any that did not pass. */
export function toLookAt(records: readonly BatchRecord[]): number {
  return records.filter((record) => record.verdict !== "PASS").length;
}

/**
 * One row per input row, in file order, then the counts:
 *
 *   #  VERDICT  FINAL  HOPS  URL                   CODE                REASON
 *   1  PASS     200    2     http://a.test/old
 *   2  FAIL     503    1     http://a.test/shop    final_status_error  the final URL answers 503 Service Unavailable
 */
export function renderBatchSummary(records: readonly BatchRecord[], paint: Paint): string {
  const rows = [["#", "VERDICT", "FINAL", "HOPS", "URL", "CODE", "REASON"].map((heading) => paint.dim(heading))];
  for (const record of records) rows.push(recordRow(record, paint));
  const failed = toLookAt(records);
  const expected = records.filter((record) => record.expectedFinalUrl !== "");
  const missed = expected.filter((record) => record.code === "expectation_not_met").length;
  const notTraced = records.filter((record) => record.hops === "").length;
  const counts =
    `${records.length} traced: ${records.length - failed} pass, ${failed} fail; ` +
    `${expected.length} with an expectation, ${missed} not met; ${notTraced} could not be traced`;
  const verdict = failed === 0 ? paint.good("all pass") : paint.bad(`${failed} to look at`);
  const byCode = failureCountText(records);
  return `${textTable(rows, "")}\n${paint.strong(verdict)}  ${counts}\n${byCode === "" ? "" : `failures by code: ${byCode}\n`}`;
}

function recordRow(record: BatchRecord, paint: Paint): string[] {
  const status = Number(record.finalStatus);
  const final = record.finalStatus === "" ? paint.dim("-") : paint.status(status, record.finalStatus);
  const verdict = record.verdict === "PASS" ? paint.good("PASS") : paint.bad(record.verdict);
  return [
    String(record.index + 1),
    verdict,
    final,
    record.hops === "" ? "-" : record.hops,
    record.url,
    paint.dim(record.code),
    record.reason,
  ];
}
