import { isMessage, type Message } from "@bufbuild/protobuf";
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import {
  ChainStatus,
  CheckSiteResponseSchema,
  FailedStage,
  SiteStatus,
  TraceRedirectsResponseSchema,
} from "../../../gen/sitediag/v1/diagnostics_pb.js";
import type { Metrics } from "../../observability/metrics.js";
import { callKey } from "../../service/call.js";

/**
 * First in the chain on every door: tells the call's report what only the
 * RPC layer knows, the target and the outcome code, whether the call is
 * answered by the service or refused by a later interceptor (credits).
 */
export function createCallObserver(): Interceptor {
  return (next) => async (req) => {
    const report = req.contextValues.get(callKey)?.report;
    if (report !== undefined && !req.stream && "url" in req.message && typeof req.message.url === "string") report.target = req.message.url;
    try {
      const res = await next(req);
      if (report !== undefined) report.outcome = "ok";
      return res;
    } catch (error) {
      if (report !== undefined) report.outcome = codeToString(ConnectError.from(error).code);
      throw error;
    }
  };
}

/**
 * Last in the chain, right around the service: times the diagnostic alone
 * (not the key check or the charge) and counts what it found. Label values
 * are the proto enum names, lower-cased ("up", "dns", "redirects_detected").
 */
export function createResultObserver(
  metrics: Pick<Metrics, "diagnosticDuration" | "siteCheckResults" | "redirectTraceResults">,
): Interceptor {
  return (next) => async (req) => {
    const stop = metrics.diagnosticDuration.startTimer({ operation: req.method.name });
    try {
      const res = await next(req);
      if (!res.stream) countResult(res.message, metrics);
      return res;
    } finally {
      stop();
    }
  };
}

function countResult(message: Message, metrics: Pick<Metrics, "siteCheckResults" | "redirectTraceResults">): void {
  // An answer from several vantages has no status of its own to count as one check's.
  if ((isMessage(message, CheckSiteResponseSchema) || isMessage(message, TraceRedirectsResponseSchema)) && message.vantages !== undefined)
    return;
  if (isMessage(message, CheckSiteResponseSchema)) {
    const stage = message.failedStage === undefined ? "none" : enumLabel(FailedStage, message.failedStage);
    metrics.siteCheckResults.inc({ status: enumLabel(SiteStatus, message.status), failed_stage: stage });
  } else if (isMessage(message, TraceRedirectsResponseSchema)) {
    metrics.redirectTraceResults.inc({ chain_status: enumLabel(ChainStatus, message.chainStatus) });
  }
}

/** A TypeScript enum's member name for a value, lower-cased; a value the build does not know is "unknown". */
function enumLabel(values: Readonly<Record<number, string>>, value: number): string {
  return values[value]?.toLowerCase() ?? "unknown";
}
