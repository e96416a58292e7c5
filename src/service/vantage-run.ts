import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { type VantageOrigin, VantageOriginSchema, VantageState } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { callRefundKey } from "../access/call-price.js";
import type { DiagnosticOutcome } from "../diagnostics/diagnostic-call.js";
import { REDIRECT_TRACE, SITE_CHECK } from "../shared/limits.js";
import { sharedClockMs } from "../probe/clock.js";
import type { KnownVantage, VantageFanout, VantageJob, VantageOutcomeOf } from "../vantage/vantage-fanout.js";
import { silentVantagesKey } from "./vantage-plan.js";
import type { VantageReading } from "../shared/vantage-verdict.js";
import { readVantageList } from "../shared/vantage-list.js";
import { callOf } from "./call.js";

/**
 * How long a call from several vantages waits for them, from when its
 * timeouts start: the diagnostic's own longest run (five requests of a site
 * check, the whole budget of a trace) and a margin for the trip to another
 * region and back. A vantage not in by then is unavailable, and refunded.
 */
export interface VantageDeadlines {
  readonly siteCheckMs: number;
  readonly traceMs: number;
}

const TRIP_MARGIN_MS = 2_000;

/**
 * The deadlines for the timeouts an instance is configured with
 * (SITEDIAG_SITE_TIMEOUT_MS, SITEDIAG_TRACE_TOTAL_TIMEOUT_MS): the instances
 * of a deployment share them, so a check that may run longer than the
 * default is waited for, and one held shorter is not waited for in vain.
 */
export function vantageDeadlinesFor(timeouts: { readonly siteTimeoutMs: number; readonly traceTotalTimeoutMs: number }): VantageDeadlines {
  return {
    siteCheckMs: SITE_CHECK.maxRequests * timeouts.siteTimeoutMs + TRIP_MARGIN_MS,
    traceMs: timeouts.traceTotalTimeoutMs + TRIP_MARGIN_MS,
  };
}

export const DEFAULT_VANTAGE_DEADLINES: VantageDeadlines = vantageDeadlinesFor({
  siteTimeoutMs: SITE_CHECK.requestTimeoutMs,
  traceTotalTimeoutMs: REDIRECT_TRACE.totalTimeoutMs,
});

/** One vantage's part of a call, as the service answers it: where and how it ended, and the result when it is done. */
export interface VantagePart<R> {
  readonly origin: VantageOrigin;
  /** The result, when the state is done. */
  readonly result: R | undefined;
  readonly reading: VantageReading | undefined;
}

/** Why an entry is unavailable, for people; the code is the key. */
const UNAVAILABLE_REASONS: Readonly<Record<string, string>> = {
  no_live_instance: "No instance of this vantage is live; nothing is known about the target from there",
  deadline: "This vantage did not answer by the deadline; nothing is known about the target from there",
  engine_error: "The vantage could not be reached; nothing is known about the target from there",
  overloaded: "This vantage was too busy to run it in time; nothing is known about the target from there",
};

/**
 * The vantages a request names, resolved: `all` is every vantage with a live
 * instance now. A list that is not one is the invalid_argument naming its
 * rule (the access layer refuses it before the charge; a handler called
 * without that layer refuses it here).
 */
export async function vantagesAsked(
  elements: readonly string[],
  fanout: Pick<VantageFanout, "known">,
  context: HandlerContext,
): Promise<VantagesAsked> {
  const list = readVantageList(elements);
  switch (list.kind) {
    case "none":
      return { names: [], silent: [] };
    case "problem":
      throw new ConnectError(list.problem.reason, Code.InvalidArgument);
    case "all": {
      const known = await fanout.known();
      return {
        names: known.filter((vantage) => vantage.live).map((vantage) => vantage.info.name),
        silent: known.filter((vantage) => !vantage.live),
      };
    }
    case "names":
      // The planner resolved `all` to these live names, and left the silent ones beside them.
      return { names: list.names, silent: context.values.get(silentVantagesKey) };
  }
}

/** The vantages a call runs on (live, priced), and those `all` knows but are silent now (answered unavailable at once, free). */
export interface VantagesAsked {
  readonly names: readonly string[];
  readonly silent: readonly KnownVantage[];
}

/**
 * Sends `job` to each of `names` and yields each vantage's part as it comes.
 * Every part that ends unavailable (no live instance, the deadline, the
 * engine, or the vantage's own overload) gives its vantage's price back,
 * once (the call's refund tab caps it at what was charged). When the caller
 * goes, the call ends canceled.
 */
export async function* partsFromVantages<J extends VantageJob, R>(
  fanout: VantageFanout,
  job: J,
  asked: VantagesAsked,
  deadlines: VantageDeadlines,
  context: HandlerContext,
  read: (result: R) => VantageReading,
): AsyncGenerator<VantagePart<R>> {
  const from = callOf(context)?.timeoutsFrom ?? sharedClockMs();
  const deadline = from + (job.kind === "site-check" ? deadlines.siteCheckMs : deadlines.traceMs);
  const refund = context.values.get(callRefundKey);
  const { names } = asked;
  for (const vantage of asked.silent) {
    // Known, silent now: nothing to wait for, and nothing was charged for it.
    const named = {
      name: vantage.info.name,
      label: vantage.info.label,
      location: vantage.info.location,
      elapsedMs: 0,
      version: vantage.info.version,
    };
    const lastSeen = new Date(vantage.lastSeen).toISOString();
    const origin = create(
      VantageOriginSchema,
      Object.assign({}, named, {
        state: VantageState.UNAVAILABLE,
        code: "no_live_instance",
        lastSeen,
        reason: `No instance of this vantage has been seen since ${lastSeen}; nothing is known about the target from there`,
      }),
    );
    yield { origin, result: undefined, reading: undefined };
  }
  let told = 0;
  for await (const entry of fanout.run(job, names, deadline, context.signal)) {
    told += 1;
    const named = {
      name: entry.vantage.name,
      label: entry.vantage.label,
      location: entry.vantage.location,
      elapsedMs: entry.elapsedMs,
      version: entry.vantage.version,
    };
    if (entry.state === "unavailable") {
      refund?.unit();
      yield unavailable(named, entry.reason);
      continue;
    }
    // The engine carries each kind's own outcome back; its result type is the handler's to name.
    const outcome = entry.outcome as VantageOutcomeOf<J> as DiagnosticOutcome<R>;
    switch (outcome.kind) {
      case "result":
        yield {
          origin: create(VantageOriginSchema, Object.assign({}, named, { state: VantageState.DONE })),
          result: outcome.result,
          reading: read(outcome.result),
        };
        break;
      case "refused":
        yield {
          origin: create(
            VantageOriginSchema,
            Object.assign({}, named, { state: VantageState.REFUSED, code: outcome.refusal.code, reason: outcome.refusal.reason }),
          ),
          result: undefined,
          reading: undefined,
        };
        break;
      case "overloaded":
        refund?.unit();
        callOf(context)?.report.overloaded(outcome.overload);
        yield unavailable(named, "overloaded");
        break;
      case "cancelled":
        // The caller's own cancel ends the whole call below; a vantage that ended the job itself (it stopped) is unavailable.
        if (context.signal.aborted) break;
        refund?.unit();
        yield unavailable(named, "engine_error");
        break;
    }
  }
  if (context.signal.aborted || told < names.length)
    throw new ConnectError("the call was canceled before every vantage answered", Code.Canceled);
}

function unavailable(
  named: { name: string; label: string | undefined; location: string | undefined; elapsedMs: number; version: string | undefined },
  code: string,
): VantagePart<never> {
  const origin = create(
    VantageOriginSchema,
    Object.assign({}, named, {
      state: VantageState.UNAVAILABLE,
      code,
      reason: UNAVAILABLE_REASONS[code] ?? UNAVAILABLE_REASONS.engine_error,
    }),
  );
  return { origin, result: undefined, reading: undefined };
}

/** Entries in the order of their vantages' names, as the answer lists them. */
export function byName<P extends { readonly origin: VantageOrigin }>(parts: readonly P[]): P[] {
  return [...parts].sort((a, b) => (a.origin.name < b.origin.name ? -1 : a.origin.name > b.origin.name ? 1 : 0));
}
