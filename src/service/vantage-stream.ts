import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import {
  type VantageCheckSiteRequest,
  type VantageCheckSiteResponse,
  VantageCheckSiteResponseSchema,
  VantageSiteCheckSchema,
  type VantageTraceRedirectsRequest,
  type VantageTraceRedirectsResponse,
  VantageTraceRedirectsResponseSchema,
  VantageTraceSchema,
  type VantagesAsked as VantagesAskedMessage,
  VantagesAskedSchema,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { RedirectTraceResult } from "../diagnostics/redirect-trace-result.js";
import type { SiteCheckResult } from "../diagnostics/site-check-result.js";
import { vantageListCause } from "../shared/failures.js";
import { siteCheckReading, traceReading, type VantageReading, vantageVerdict } from "../shared/vantage-verdict.js";
import { callOf } from "./call.js";
import { siteCheckMessage } from "./check-site.js";
import { toTraceRedirectsResponse } from "./trace-redirects.js";
import { refuseUnreadableInput, type VantageService } from "./vantage-answer.js";
import { type AnsweredData, vantageDifferences } from "./vantage-differences.js";
import { partsFromVantages, vantagesAsked, type VantagesAsked } from "./vantage-run.js";
import { VERDICT_VALUES } from "../shared/vantage-verdict-values.js";
import { userAgentOption } from "../shared/user-agent-option.js";

// The streaming doors of a call from several vantages: each vantage's entry
// as it arrives (arrival order, each naming its vantage), then the verdict
// over them all as the last message. The same run, refunds and verdict as
// the unary answer (vantage-answer.ts).

/** VantageCheckSite. */
export function createVantageCheckSiteStream(service: VantageService) {
  return async function* (request: VantageCheckSiteRequest, context: HandlerContext): AsyncGenerator<VantageCheckSiteResponse> {
    const names = await namesOf(request.vantages, service, request.url, false, context);
    const options = Object.assign(
      { details: request.details === true, timeoutsFrom: callOf(context)?.timeoutsFrom },
      userAgentOption(request.userAgent),
    );
    const readings: (VantageReading | undefined)[] = [];
    const answered: AnsweredData[] = [];
    const job = { kind: "site-check" as const, raw: request.url, options };
    if (request.announce === true)
      yield create(VantageCheckSiteResponseSchema, { asked: await announcement(names, service, service.deadlines.siteCheckMs) });
    for await (const part of partsFromVantages<typeof job, SiteCheckResult>(
      service.fanout,
      job,
      names,
      service.deadlines,
      context,
      siteCheckReading,
    )) {
      readings.push(part.reading);
      const entry = create(VantageSiteCheckSchema, {
        vantage: part.origin,
        data: part.result === undefined ? undefined : siteCheckMessage(part.result),
      });
      if (entry.data !== undefined)
        answered.push({ name: part.origin.name, version: part.origin.version, kind: "site-check", data: entry.data });
      yield create(VantageCheckSiteResponseSchema, { entry });
    }
    yield create(VantageCheckSiteResponseSchema, {
      verdict: VERDICT_VALUES[vantageVerdict(readings)],
      differences: vantageDifferences(byName(answered)),
    });
  };
}

/** VantageTraceRedirects. */
export function createVantageTraceStream(service: VantageService) {
  return async function* (request: VantageTraceRedirectsRequest, context: HandlerContext): AsyncGenerator<VantageTraceRedirectsResponse> {
    const names = await namesOf(request.vantages, service, request.url, true, context);
    const job = {
      kind: "trace" as const,
      raw: request.url,
      options: Object.assign({ details: request.details === true }, userAgentOption(request.userAgent)),
    };
    const readings: (VantageReading | undefined)[] = [];
    const answered: AnsweredData[] = [];
    if (request.announce === true)
      yield create(VantageTraceRedirectsResponseSchema, { asked: await announcement(names, service, service.deadlines.traceMs) });
    for await (const part of partsFromVantages<typeof job, RedirectTraceResult>(
      service.fanout,
      job,
      names,
      service.deadlines,
      context,
      traceReading,
    )) {
      readings.push(part.reading);
      const entry = create(VantageTraceSchema, {
        vantage: part.origin,
        data: part.result === undefined ? undefined : toTraceRedirectsResponse(part.result),
      });
      if (entry.data !== undefined)
        answered.push({ name: part.origin.name, version: part.origin.version, kind: "trace", data: entry.data });
      yield create(VantageTraceRedirectsResponseSchema, { entry });
    }
    yield create(VantageTraceRedirectsResponseSchema, {
      verdict: VERDICT_VALUES[vantageVerdict(readings)],
      differences: vantageDifferences(byName(answered)),
    });
  };
}

/**
 * The opening message of an announced stream: every vantage asked, with the
 * words its instances announce (a name with no live instance has none), and
 * the deadline, so a caller can show the ones still out and until when.
 */
async function announcement(asked: VantagesAsked, service: VantageService, deadlineMs: number): Promise<VantagesAskedMessage> {
  // Membership is read at most every 250 ms by the fanout: the run below reads the same.
  const live = new Map((await service.fanout.alive()).map((info) => [info.name, info]));
  const infos = [...asked.names.map((name) => live.get(name) ?? { name }), ...asked.silent.map((vantage) => vantage.info)];
  const vantages = infos
    .map((info) => ({ name: info.name, label: info.label, location: info.location }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return create(VantagesAskedSchema, { vantages, deadlineMs });
}

/** Answers in the order of their vantages' names, as the unary answer's differences list them. */
function byName(answers: readonly AnsweredData[]): AnsweredData[] {
  return [...answers].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The vantages resolved; these methods have no plain form, so naming none is the list's own 400. */
async function namesOf(
  elements: readonly string[],
  service: VantageService,
  raw: string,
  allowBareDomain: boolean,
  context: HandlerContext,
): Promise<VantagesAsked> {
  if (elements.length === 0) throw new ConnectError(vantageListCause("VANTAGES_SYNTAX").reason, Code.InvalidArgument);
  const asked = await vantagesAsked(elements, service.fanout, context);
  refuseUnreadableInput(raw, { allowBareDomain }, asked.names.length, context);
  return asked;
}
