import { create, getOption, hasOption } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  ChainStatus,
  ChainHopSchema,
  ChainStatusSchema,
  TraceRedirectsResponseSchema,
  TraceWarningSchema,
  WarningSeverity,
  type TraceRedirectsRequest,
  type TraceRedirectsResponse,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { ChainStatusId, RedirectTraceResult } from "../diagnostics/redirect-trace.js";
import type { TraceWarningSeverity } from "../diagnostics/redirect-trace-result.js";
import { rest_value } from "../../gen/sitediag/v1/options_pb.js";
import type { DiagnosticRunner } from "../runner/diagnostic-runner.js";
import { answerDiagnostic } from "./diagnostic-answer.js";
import { detailsMessage } from "./details-message.js";
import { userAgentOption } from "../shared/user-agent-option.js";

/** The TraceRedirects RPC: validate the input, run the trace, map the result to the message. */
export function createTraceRedirectsHandler(runner: DiagnosticRunner) {
  return async (request: TraceRedirectsRequest, context: HandlerContext): Promise<TraceRedirectsResponse> => {
    return answerDiagnostic(
      () =>
        runner.traceRedirects(
          request.url,
          context.signal,
          Object.assign({ details: request.details === true }, userAgentOption(request.userAgent)),
        ),
      toTraceRedirectsResponse,
      "The trace could not be completed",
      context,
    );
  };
}

/**
 * The enum value of each neutral chain status id. The contract's wording is
 * not here: it is the enum value's (sitediag.v1.rest_value) in the proto, the
 * one place the wording lives, applied when the message is rendered.
 */
const CHAIN_STATUS: Readonly<Record<ChainStatusId, ChainStatus>> = {
  healthy: ChainStatus.HEALTHY,
  redirects_detected: ChainStatus.REDIRECTS_DETECTED,
  redirect_loop: ChainStatus.REDIRECT_LOOP,
  too_many_redirects: ChainStatus.TOO_MANY_REDIRECTS,
  request_failed: ChainStatus.REQUEST_FAILED,
  timeout: ChainStatus.TIMEOUT,
};

/** The enum value of each severity; its REST spelling is the value's rest_value, as for the chain status. */
const WARNING_SEVERITY: Readonly<Record<TraceWarningSeverity, WarningSeverity>> = {
  info: WarningSeverity.INFO,
  warning: WarningSeverity.WARNING,
  problem: WarningSeverity.PROBLEM,
};

export function chainStatusOf(id: ChainStatusId): ChainStatus {
  return CHAIN_STATUS[id];
}

/** The contract's wording of a chain status ("Redirects detected"), read off the proto for those who render it outside REST (the CLI's report). */
export function chainStatusWording(id: ChainStatusId): string {
  const value = ChainStatusSchema.value[chainStatusOf(id)];
  // Every enum value a status maps to spells its rest_value; a test goes over every id.
  if (value === undefined || !hasOption(value, rest_value)) throw new Error(`chain status ${id} has no rest_value in the proto`);
  return getOption(value, rest_value);
}

/** The diagnostic's result as the public message; shared by the RPC and the CLI. Nulls become unset optional fields. */
export function toTraceRedirectsResponse(result: RedirectTraceResult): TraceRedirectsResponse {
  return create(TraceRedirectsResponseSchema, {
    input: result.input,
    redirects: result.redirects,
    finalUrl: result.finalUrl,
    finalStatus: result.finalStatus ?? undefined,
    totalTimeMs: result.totalTimeMs,
    chainStatus: chainStatusOf(result.chainStatus),
    chain: result.chain.map((hop) =>
      create(ChainHopSchema, {
        hop: hop.hop,
        url: hop.url,
        hostname: hop.hostname,
        status: hop.status,
        statusText: hop.statusText,
        location: hop.location ?? undefined,
        redirectType: hop.redirectType ?? undefined,
        responseTimeMs: hop.responseTimeMs,
        upgradedToHttps: hop.upgradedToHttps,
      }),
    ),
    warnings: result.warnings.map((warning) =>
      create(TraceWarningSchema, {
        code: warning.code,
        message: warning.message,
        hop: warning.hop ?? undefined,
        severity: WARNING_SEVERITY[warning.severity],
      }),
    ),
    details: result.details === undefined ? undefined : detailsMessage(result.details),
  });
}
