import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import {
  type TraceBatchEntry,
  TraceExpectationSchema,
  type TraceRedirectsBatchRequest,
  type TraceRedirectsBatchResponse,
  TraceRedirectsBatchResponseSchema,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { RedirectTraceOutcome, TraceOptions } from "../diagnostics/redirect-trace.js";
import { judgeExpectation } from "../diagnostics/redirect-chain.js";
import { BATCH } from "../limits.js";
import type { DiagnosticRunner } from "../runner/diagnostic-runner.js";
import { overloadAnswer } from "./diagnostic-answer.js";
import { asItemError, batchSizeProblem, completionOrder, itemError } from "./batch-stream.js";
import { toTraceRedirectsResponse } from "./trace-redirects.js";
import { userAgentOption } from "../user-agent-option.js";

/**
 * The TraceRedirectsBatch RPC: every item traced as TraceRedirects traces
 * (same hop limits and 30 s budget per trace), at most BATCH.concurrency at
 * once, each streamed as it completes, with its expectation judged when it
 * named one. Credits were charged for the whole batch before this runs.
 */
export function createTraceRedirectsBatchHandler(runner: DiagnosticRunner) {
  return async function* (request: TraceRedirectsBatchRequest, context: HandlerContext): AsyncGenerator<TraceRedirectsBatchResponse> {
    const problem = batchSizeProblem(request.items.length);
    if (problem !== undefined) throw new ConnectError(problem, Code.InvalidArgument);
    yield* traceBatch(request.items, runner, context.signal, Object.assign({ details: request.details === true }, userAgentOption(request.userAgent)), context);
  };
}

/** One URL to trace and where it should end, as the request message or a CLI row gives it. */
export type BatchEntry = Pick<TraceBatchEntry, "url" | "expectedFinalUrl">;

/**
 * Traces the entries with at most BATCH.concurrency at once, yielding each
 * item as it completes; the CLI's `trace --batch` runs this too. `context`:
 * the call's, under the service (an item answered as overload is given back there).
 */
export function traceBatch(entries: readonly BatchEntry[], runner: DiagnosticRunner, signal: AbortSignal, options: TraceOptions = {}, context?: HandlerContext): AsyncGenerator<TraceRedirectsBatchResponse> {
  return completionOrder(entries, BATCH.concurrency, signal, (entry, index) => traceBatchItem(entry, index, runner, signal, options, context));
}

async function traceBatchItem(
  { url, expectedFinalUrl }: BatchEntry,
  index: number,
  runner: DiagnosticRunner,
  signal: AbortSignal,
  options: TraceOptions,
  context: HandlerContext | undefined,
): Promise<TraceRedirectsBatchResponse> {
  let outcome: RedirectTraceOutcome;
  try {
    outcome = await runner.traceRedirects(url, signal, options);
  } catch (reason) {
    return create(TraceRedirectsBatchResponseSchema, { index, url, outcome: { case: "error", value: asItemError(reason) } });
  }
  switch (outcome.kind) {
    case "refused":
      return create(TraceRedirectsBatchResponseSchema, {
        index,
        url,
        outcome: { case: "error", value: itemError(new ConnectError(outcome.refusal.reason, Code.InvalidArgument)) },
      });
    case "cancelled":
      return create(TraceRedirectsBatchResponseSchema, { index, url, outcome: { case: "error", value: itemError(new ConnectError("cancelled", Code.Canceled)) } });
    case "overloaded": {
      const error = context === undefined ? new ConnectError(outcome.overload.detail, Code.Unavailable) : overloadAnswer(outcome.overload, context);
      return create(TraceRedirectsBatchResponseSchema, { index, url, outcome: { case: "error", value: itemError(error) } });
    }
    case "result": {
      const verdict = expectedFinalUrl === undefined ? undefined : judgeExpectation(outcome.result, expectedFinalUrl);
      return create(TraceRedirectsBatchResponseSchema, {
        index,
        url,
        outcome: { case: "result", value: toTraceRedirectsResponse(outcome.result) },
        expectation: verdict === undefined ? undefined : create(TraceExpectationSchema, verdict.matches ? { matches: true } : verdict),
      });
    }
  }
}
