import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import {
  type CheckSiteRequest,
  CheckSiteRequestSchema,
  type CheckSiteResponse,
  CheckSiteResponseSchema,
  type CheckSitesRequest,
  type CheckSitesResponse,
  CheckSitesResponseSchema,
  FailedStage,
  RedirectHopSchema,
  SiteStatus,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { SiteCheckResult } from "../diagnostics/site-check-result.js";
import type { FailureStage } from "../shared/failures.js";
import { BATCH } from "../shared/limits.js";
import type { DiagnosticRunner } from "../runner/diagnostic-runner.js";
import { asItemError, batchSizeProblem, completionOrder } from "./batch-stream.js";
import { answerDiagnostic } from "./diagnostic-answer.js";
import { detailsMessage } from "./details-message.js";
import { callOf } from "./call.js";
import { userAgentOption } from "../shared/user-agent-option.js";

const STAGES: Readonly<Record<FailureStage, FailedStage>> = {
  dns: FailedStage.DNS,
  connect: FailedStage.CONNECT,
  tls: FailedStage.TLS,
  http: FailedStage.HTTP,
};

/**
 * The CheckSite RPC: run the site check, map the result to the message.
 * Validation lives in the diagnostic and runs here, after the access layer has
 * charged credits (spec §5: credits are charged before parameters are validated).
 */
export function createCheckSiteHandler(runner: DiagnosticRunner) {
  return async (request: CheckSiteRequest, context: HandlerContext): Promise<CheckSiteResponse> => {
    // The message carries nothing of each request's full outcome: not asked for, not carried back from a probe thread.
    const options = Object.assign(
      { details: request.details === true, timeoutsFrom: callOf(context)?.timeoutsFrom },
      userAgentOption(request.userAgent),
    );
    return answerDiagnostic(
      () => runner.checkSite(request.url, context.signal, options),
      siteCheckMessage,
      "The check could not be completed",
      context,
    );
  };
}

/**
 * The CheckSites RPC: every URL through the very CheckSite handler (same
 * limits, timeouts and policy), at most BATCH.concurrency at once, each
 * result streamed as it completes. Credits were charged for the whole batch
 * before this runs.
 */
export function createCheckSitesHandler(runner: DiagnosticRunner) {
  const checkOne = createCheckSiteHandler(runner);
  return async function* (request: CheckSitesRequest, context: HandlerContext): AsyncGenerator<CheckSitesResponse> {
    const problem = batchSizeProblem(request.urls.length);
    if (problem !== undefined) throw new ConnectError(problem, Code.InvalidArgument);
    yield* completionOrder(request.urls, BATCH.concurrency, context.signal, async (url, index) => {
      const outcome = await checkOne(
        create(CheckSiteRequestSchema, { url, details: request.details, userAgent: request.userAgent }),
        context,
      ).then(
        (result) => ({ case: "result" as const, value: result }),
        (reason: unknown) => ({ case: "error" as const, value: asItemError(reason) }),
      );
      return create(CheckSitesResponseSchema, { index, url, outcome });
    });
  };
}

/** The contract's view of a site check result; null fields stay unset. */
export function siteCheckMessage(result: SiteCheckResult): CheckSiteResponse {
  return create(CheckSiteResponseSchema, {
    requestedUrl: result.requestedUrl,
    finalUrl: result.finalUrl ?? undefined,
    status: result.status === "up" ? SiteStatus.UP : SiteStatus.DOWN,
    statusCode: result.statusCode ?? undefined,
    statusText: result.statusText ?? undefined,
    responseTime: result.responseTime ?? undefined,
    reason: result.reason ?? undefined,
    failedStage: result.failedStage === null ? undefined : STAGES[result.failedStage],
    redirectHops: (result.redirectHops ?? []).map((hop) => create(RedirectHopSchema, { url: hop.url, status: hop.status })),
    proxyBlocked: result.proxyBlocked,
    details: result.details === undefined ? undefined : detailsMessage(result.details),
  });
}
