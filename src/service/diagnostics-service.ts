import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import type { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { DiagnosticRunner } from "../runner/diagnostic-runner.js";
import { callOf } from "./call.js";
import { createCheckSiteHandler, createCheckSitesHandler } from "./check-site.js";
import { createTraceRedirectsBatchHandler } from "./trace-redirects-batch.js";
import { createTraceRedirectsHandler } from "./trace-redirects.js";
import { createVantageCheckSite, createVantageTrace, type VantageService, withVantages } from "./vantage-answer.js";
import { DEFAULT_VANTAGE_DEADLINES } from "./vantage-run.js";
import { createVantageCheckSiteStream, createVantageTraceStream } from "./vantage-stream.js";
import { createLocalFanout, LOCAL_VANTAGE } from "../vantage/local-fanout.js";

/**
 * The DiagnosticsService implementation every door calls. A request naming
 * vantages goes to them through `vantages` (by default the one vantage of
 * this process, `local`, on the same runner).
 */
export function createDiagnosticsService(
  runner: DiagnosticRunner,
  vantages?: Partial<VantageService>,
): ServiceImpl<typeof DiagnosticsService> {
  const service: VantageService = {
    fanout: vantages?.fanout ?? createLocalFanout({ info: LOCAL_VANTAGE, runner }),
    deadlines: vantages?.deadlines ?? DEFAULT_VANTAGE_DEADLINES,
  };
  return {
    checkSite: rejectingInputProblems(withVantages(createCheckSiteHandler(runner), createVantageCheckSite(service))),
    traceRedirects: rejectingInputProblems(withVantages(createTraceRedirectsHandler(runner), createVantageTrace(service))),
    checkSites: createCheckSitesHandler(runner),
    traceRedirectsBatch: createTraceRedirectsBatchHandler(runner),
    vantageCheckSite: createVantageCheckSiteStream(service),
    vantageTraceRedirects: createVantageTraceStream(service),
  };
}

function rejectingInputProblems<I, O>(
  handler: (request: I, context: HandlerContext) => Promise<O>,
): (request: I, context: HandlerContext) => Promise<O> {
  return (request, context) => {
    // The door could not map the input onto the request message; rejected here, after the charge (call.ts).
    const problem = callOf(context)?.inputProblem;
    if (problem !== undefined) return Promise.reject(new ConnectError(problem, Code.InvalidArgument));
    return handler(request, context);
  };
}
