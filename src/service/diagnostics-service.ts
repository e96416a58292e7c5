import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import type { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { DiagnosticRunner } from "../runner/diagnostic-runner.js";
import { callOf } from "./call.js";
import { createCheckSiteHandler, createCheckSitesHandler } from "./check-site.js";
import { createTraceRedirectsBatchHandler } from "./trace-redirects-batch.js";
import { createTraceRedirectsHandler } from "./trace-redirects.js";

/** The DiagnosticsService implementation every door calls. */
export function createDiagnosticsService(runner: DiagnosticRunner): ServiceImpl<typeof DiagnosticsService> {
  return {
    checkSite: rejectingInputProblems(createCheckSiteHandler(runner)),
    traceRedirects: rejectingInputProblems(createTraceRedirectsHandler(runner)),
    checkSites: createCheckSitesHandler(runner),
    traceRedirectsBatch: createTraceRedirectsBatchHandler(runner),
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
