/**
 * The one line a hop writes about a defect of ours (InternalProbeError,
 * failure.ts). A probe thread has no logger of the service's (pino lives
 * on the main thread, configured there), so the line is written in the
 * service log's form (pino's JSON fields, level 50 "error", `service:
 * "sitediag"`) to the process's stdout, where `serve` writes its own lines;
 * Node forwards a worker thread's stdout to the process's. A prober may be
 * given its own reporter instead (createProber's hooks: tests, embedders).
 */
import { hostname } from "node:os";
import { threadId } from "node:worker_threads";
import type { FailureStage } from "../shared/failures.js";

/** What the hop knows of the defect when it ends. */
export interface HopDefect {
  /** The target's host, as in the URL (never the path, query or credentials). */
  readonly host: string;
  /** The phase the hop had reached. */
  readonly stage: FailureStage;
  /** What was thrown: an InternalProbeError wraps it as its `cause`. */
  readonly error: unknown;
}

export type DefectReporter = (defect: HopDefect) => void;

/** pino's number for "error". */
const ERROR_LEVEL = 50;

/** The JSON line (with its newline) for `defect`, as pino would write it; never throws. */
export function defectLine(defect: HopDefect, time: number = Date.now()): string {
  const cause = defect.error instanceof Error && defect.error.cause !== undefined ? defect.error.cause : defect.error;
  const line = {
    level: ERROR_LEVEL,
    time,
    pid: process.pid,
    hostname: hostname(),
    service: "sitediag",
    probeThread: threadId,
    host: defect.host,
    stage: defect.stage,
    err: errorFields(cause),
    msg: "internal probe error: the hop failed on an error of our own",
  };
  try {
    return `${JSON.stringify(line)}\n`;
  } catch {
    return `${JSON.stringify(Object.assign({}, line, { err: { type: "unprintable", message: "" } }))}\n`;
  }
}

/** Writes the line to stdout; a stdout that cannot take it loses the line, never the hop. */
export const logDefect: DefectReporter = (defect) => {
  try {
    process.stdout.write(defectLine(defect));
  } catch {
    // Nowhere left to say it.
  }
};

function errorFields(error: unknown): { readonly type: string; readonly message: string; readonly stack?: string } {
  if (!(error instanceof Error)) return { type: typeof error, message: safeString(error) };
  return { type: error.name, message: error.message, stack: error.stack ?? "" };
}

function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return "";
  }
}
