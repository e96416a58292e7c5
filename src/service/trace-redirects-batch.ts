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
import { BATCH, REDIRECT_TRACE } from "../shared/limits.js";
import type { DiagnosticRunner } from "../runner/diagnostic-runner.js";
import { overloadAnswer } from "./diagnostic-answer.js";
import { asItemError, batchSizeProblem, completionOrder, itemError, refusedItemError } from "./batch-stream.js";
import { toTraceRedirectsResponse } from "./trace-redirects.js";
import { userAgentOption } from "../shared/user-agent-option.js";

/**
 * The TraceRedirectsBatch RPC: every item traced as TraceRedirects traces
 * (same hop limits and 30 s budget per trace), at most BATCH.concurrency at
 * once, each streamed as it completes, with its expectation judged when it
 * named one. Credits were charged for the whole batch before this runs.
 */
export function createTraceRedirectsBatchHandler(runner: DiagnosticRunner) {
  return async function* (request: TraceRedirectsBatchRequest, context: HandlerContext): AsyncGenerator<TraceRedirectsBatchResponse> {
    const problem = batchSizeProblem(request.items.length) ?? maxRedirectsProblem(request.maxRedirects, "max_redirects");
    if (problem !== undefined) throw new ConnectError(problem, Code.InvalidArgument);
    const limit = request.maxRedirects;
    // The batch's limit is each item's unless the item sets its own.
    const entries =
      limit === undefined
        ? request.items
        : request.items.map((item) => ({
            url: item.url,
            expectedFinalUrl: item.expectedFinalUrl,
            maxRedirects: item.maxRedirects ?? limit,
          }));
    yield* traceBatch(
      entries,
      runner,
      context.signal,
      Object.assign({ details: request.details === true }, userAgentOption(request.userAgent)),
      context,
    );
  };
}

/** One URL to trace, where it should end and how many redirects it may take, as the request message or a CLI row gives it. */
export type BatchEntry = Pick<TraceBatchEntry, "url" | "expectedFinalUrl" | "maxRedirects">;

/**
 * Why a chain-length limit is not one (outside 0 to the contract's 20
 * redirects, which no chain passes anyway), naming the field; undefined when
 * it is one or there is none.
 */
export function maxRedirectsProblem(limit: number | undefined, field: string): string | undefined {
  if (limit === undefined || (Number.isInteger(limit) && limit >= 0 && limit <= REDIRECT_TRACE.maxRedirects)) return undefined;
  return `${field} must be a whole number from 0 to ${REDIRECT_TRACE.maxRedirects}, not ${limit}`;
}

/**
 * Traces the entries with at most BATCH.concurrency at once, yielding each
 * item as it completes; the CLI's `trace --batch` runs this too. `context`:
 * the call's, under the service (an item answered as overload is given back there).
 */
export function traceBatch(
  entries: readonly BatchEntry[],
  runner: DiagnosticRunner,
  signal: AbortSignal,
  options: TraceOptions = {},
  context?: HandlerContext,
): AsyncGenerator<TraceRedirectsBatchResponse> {
  return completionOrder(entries, BATCH.concurrency, signal, async (entry, index) => {
    const limitProblem = maxRedirectsProblem(entry.maxRedirects, "the item's max_redirects");
    if (limitProblem !== undefined) {
      return create(TraceRedirectsBatchResponseSchema, {
        index,
        url: entry.url,
        outcome: { case: "error", value: itemError(new ConnectError(limitProblem, Code.InvalidArgument)) },
      });
    }
    const item = await traceBatchItem(entry, index, runner, signal, options, context);
    // Every item says the limit it was held to, whatever became of it, so its report keeps it.
    item.maxRedirects = entry.maxRedirects;
    return item;
  });
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
        outcome: { case: "error", value: refusedItemError(outcome.refusal) },
      });
    case "cancelled":
      return create(TraceRedirectsBatchResponseSchema, {
        index,
        url,
        outcome: { case: "error", value: itemError(new ConnectError("cancelled", Code.Canceled)) },
      });
    case "overloaded": {
      const error =
        context === undefined ? new ConnectError(outcome.overload.detail, Code.Unavailable) : overloadAnswer(outcome.overload, context);
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
