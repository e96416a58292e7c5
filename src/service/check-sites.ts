import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import {
  CheckSiteRequestSchema,
  type CheckSitesRequest,
  type CheckSitesResponse,
  CheckSitesResponseSchema,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import { BATCH } from "../limits.js";
import type { DiagnosticRunner } from "../runner/diagnostic-runner.js";
import { asItemError, batchSizeProblem, completionOrder } from "./batch-stream.js";
import { createCheckSiteHandler } from "./check-site.js";

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
      const outcome = await checkOne(create(CheckSiteRequestSchema, { url, details: request.details }), context).then(
        (result) => ({ case: "result" as const, value: result }),
        (reason: unknown) => ({ case: "error" as const, value: asItemError(reason) }),
      );
      return create(CheckSitesResponseSchema, { index, url, outcome });
    });
  };
}
