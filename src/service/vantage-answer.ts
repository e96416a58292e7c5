import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import {
  type CheckSiteRequest,
  type CheckSiteResponse,
  CheckSiteResponseSchema,
  type TraceRedirectsRequest,
  type TraceRedirectsResponse,
  TraceRedirectsResponseSchema,
  VantageSiteCheckSchema,
  VantageSiteChecksSchema,
  VantageTraceSchema,
  VantageTracesSchema,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import { callRefundKey } from "../access/call-price.js";
import { type InputRules, parseTargetInput } from "../diagnostics/diagnostic-call.js";
import type { SiteCheckResult } from "../diagnostics/site-check-result.js";
import type { RedirectTraceResult } from "../diagnostics/redirect-trace-result.js";
import type { VantageFanout } from "../vantage/vantage-fanout.js";
import { siteCheckReading, traceReading, vantageVerdict } from "../shared/vantage-verdict.js";
import { callOf } from "./call.js";
import { siteCheckMessage } from "./check-site.js";
import { toTraceRedirectsResponse } from "./trace-redirects.js";
import { vantageDifferences } from "./vantage-differences.js";
import { byName, partsFromVantages, type VantageDeadlines, type VantagePart, vantagesAsked } from "./vantage-run.js";
import { VERDICT_VALUES } from "../shared/vantage-verdict-values.js";
import { userAgentOption } from "../shared/user-agent-option.js";

/** What the service runs a call from several vantages with. */
export interface VantageService {
  readonly fanout: VantageFanout;
  readonly deadlines: VantageDeadlines;
}

type Handler<I, O> = (request: I, context: HandlerContext) => Promise<O>;

/**
 * CheckSite with `vantages`: the check from each vantage named, answered
 * when every one is in or the deadline has passed. The response's own
 * contract fields stay unset but requested_url: each entry carries its
 * vantage's answer, and `vantages.verdict` says what they say together.
 */
export function createVantageCheckSite(service: VantageService): Handler<CheckSiteRequest, CheckSiteResponse> {
  return async (request, context) => {
    const asked = await vantagesAsked(request.vantages, service.fanout, context);
    refuseUnreadableInput(request.url, { allowBareDomain: false }, asked.names.length, context);
    const options = Object.assign(
      { details: request.details === true, timeoutsFrom: callOf(context)?.timeoutsFrom },
      userAgentOption(request.userAgent),
    );
    const parts = await allOf(
      partsFromVantages<{ kind: "site-check"; raw: string; options: typeof options }, SiteCheckResult>(
        service.fanout,
        { kind: "site-check", raw: request.url, options },
        asked,
        service.deadlines,
        context,
        siteCheckReading,
      ),
    );
    const entries = parts.map((part) =>
      create(VantageSiteCheckSchema, { vantage: part.origin, data: part.result === undefined ? undefined : siteCheckMessage(part.result) }),
    );
    return create(CheckSiteResponseSchema, {
      requestedUrl: request.url,
      vantages: create(VantageSiteChecksSchema, {
        verdict: VERDICT_VALUES[vantageVerdict(parts.map((part) => part.reading))],
        entries,
        differences: vantageDifferences(
          entries.flatMap((entry) =>
            entry.data === undefined
              ? []
              : [{ name: entry.vantage?.name ?? "", version: entry.vantage?.version, kind: "site-check" as const, data: entry.data }],
          ),
        ),
      }),
    });
  };
}

/** TraceRedirects with `vantages`, alike: the top-level fields stay unset but input. */
export function createVantageTrace(service: VantageService): Handler<TraceRedirectsRequest, TraceRedirectsResponse> {
  return async (request, context) => {
    const asked = await vantagesAsked(request.vantages, service.fanout, context);
    refuseUnreadableInput(request.url, { allowBareDomain: true }, asked.names.length, context);
    const options = Object.assign({ details: request.details === true }, userAgentOption(request.userAgent));
    const parts = await allOf(
      partsFromVantages<{ kind: "trace"; raw: string; options: typeof options }, RedirectTraceResult>(
        service.fanout,
        { kind: "trace", raw: request.url, options },
        asked,
        service.deadlines,
        context,
        traceReading,
      ),
    );
    const entries = parts.map((part) =>
      create(VantageTraceSchema, {
        vantage: part.origin,
        data: part.result === undefined ? undefined : toTraceRedirectsResponse(part.result),
      }),
    );
    return create(TraceRedirectsResponseSchema, {
      input: request.url,
      vantages: create(VantageTracesSchema, {
        verdict: VERDICT_VALUES[vantageVerdict(parts.map((part) => part.reading))],
        entries,
        differences: vantageDifferences(
          entries.flatMap((entry) =>
            entry.data === undefined
              ? []
              : [{ name: entry.vantage?.name ?? "", version: entry.vantage?.version, kind: "trace" as const, data: entry.data }],
          ),
        ),
      }),
    });
  };
}

/**
 * An input that is no URL at all (missing, not absolute, unparsable) is
 * refused here, before any vantage, as the plain call refuses it: the same
 * 400 (invalid_argument, the refusal as its cause), and the same price, one
 * call's; the other vantages' units are given back. Whether a URL may be
 * visited is each vantage's own judgement: that is its entry's `refused`.
 */
export function refuseUnreadableInput(raw: string, rules: InputRules, vantages: number, context: HandlerContext): void {
  const parsed = parseTargetInput(raw, rules);
  if (parsed.ok) return;
  const refund = context.values.get(callRefundKey);
  for (let unit = 1; unit < vantages; unit++) refund?.unit();
  throw new ConnectError(parsed.refusal.reason, Code.InvalidArgument, undefined, undefined, parsed.refusal);
}

/** The plain handler for a request without vantages, the vantage one for a request with them. */
export function withVantages<I extends { readonly vantages: readonly string[] }, O>(
  plain: Handler<I, O>,
  fromVantages: Handler<I, O>,
): Handler<I, O> {
  return (request, context) => (request.vantages.length === 0 ? plain(request, context) : fromVantages(request, context));
}

async function allOf<R>(parts: AsyncIterable<VantagePart<R>>): Promise<VantagePart<R>[]> {
  const all: VantagePart<R>[] = [];
  for await (const part of parts) all.push(part);
  return byName(all);
}
