import { Code, ConnectError, createContextKey, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import type { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { DiagnosticRunner } from "../runner/diagnostic-runner.js";
import { createCheckSiteHandler } from "./check-site.js";
import { createCheckSitesHandler } from "./check-sites.js";
import { createTraceRedirectsBatchHandler } from "./trace-redirects-batch.js";
import { createTraceRedirectsHandler } from "./trace-redirects.js";

/**
 * A problem a door found while turning its input into the request message
 * (a query parameter given twice, a number that is not one). The door cannot
 * answer it itself: the contract charges credits before parameters are
 * validated, and charging happens in interceptors that run before the
 * service. So the door records the problem here and the service rejects the
 * call, after the charge, exactly as it rejects an invalid URL.
 */
export const inputProblemKey = createContextKey<string | undefined>(undefined, {
  description: "input the door could not map onto the request message",
});

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
    const problem = context.values.get(inputProblemKey);
    if (problem !== undefined) return Promise.reject(new ConnectError(problem, Code.InvalidArgument));
    return handler(request, context);
  };
}
