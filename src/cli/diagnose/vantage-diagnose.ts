import { create, type DescMethod, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createHandlerContext, type HandlerContext } from "@connectrpc/connect";
import {
  CheckSiteRequestSchema,
  CheckSiteResponseSchema,
  DiagnosticsService,
  TraceRedirectsRequestSchema,
  TraceRedirectsResponseSchema,
  VantageCheckSiteRequestSchema,
  type VantageDifference,
  type VantageSiteChecks,
  type VantageTraces,
  VantageTraceRedirectsRequestSchema,
} from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { startingUrlText } from "../../diagnostics/starting-url.js";
import type { PolicyRefusal } from "../../shared/failures.js";
import { restData } from "../../server/rest/vantage-data.js";
import { createVantageCheckSite, createVantageTrace, type VantageService } from "../../service/vantage-answer.js";
import { createVantageCheckSiteStream, createVantageTraceStream } from "../../service/vantage-stream.js";
import { vantageDeadlinesFor } from "../../service/vantage-run.js";
import { redisAskerFromConfig } from "../../vantage/fanout-from-config.js";
import { createLocalFanout, LOCAL_VANTAGE } from "../../vantage/local-fanout.js";
import type { VantageFanout } from "../../vantage/vantage-fanout.js";
import { verdictNeedsALook, type VantageVerdictId } from "../../shared/vantage-verdict.js";
import { readVantageList } from "../../shared/vantage-list.js";
import type { CommandIo } from "../command.js";
import { jsonText } from "../report/terminal-safe.js";
import { buildsWarning, stateName, verdictId } from "../report/vantage-report.js";
import { startVantagePrinter } from "../report/vantage-printer.js";
import { type DiagnoseRun, EXIT, reportInterrupted, reportRefusal } from "./diagnose-command.js";
import { userAgentValue } from "../../shared/user-agent-option.js";

/**
 * `check --vantages LIST` and `trace --vantages LIST`: the diagnostic from
 * each vantage named, through the service's own handler for it, so the
 * entries, the verdict and --json are the API's. On a Redis store
 * (SITEDIAG_STORE, as serve reads it) the vantages are the deployment's: the
 * command asks them over the engine as an asker only (it takes no job and
 * announces nothing), and `all` means the live ones. On the SQLite store its
 * one vantage is this machine, `local` (any other name is that entry's
 * unavailable, and `all` means `local`). Exit status follows the verdict: 0
 * up_everywhere, 1 any other, 2 a list or an input that is not one, a target
 * every vantage refused, or a store's Redis that cannot be reached.
 */
export async function diagnoseFromVantages(kind: "site-check" | "trace", list: string, run: DiagnoseRun, io: CommandIo): Promise<number> {
  const { runner } = run;
  const read = readVantageList([list]);
  if (read.kind === "problem") {
    io.stderr.write(`sitediag: --vantages: ${read.problem.reason}\n`);
    return EXIT.badInput;
  }
  let lastTrouble: unknown;
  let fanout: VantageFanout;
  try {
    fanout =
      (await redisAskerFromConfig(io.config, (error) => (lastTrouble = error))) ?? createLocalFanout({ info: LOCAL_VANTAGE, runner });
  } catch (error) {
    // The connection's own error (refused, unknown host, auth) says more than the engine's timeout.
    const cause = lastTrouble ?? error;
    const why = cause instanceof Error ? cause.message : String(cause);
    io.stderr.write(`sitediag: --vantages: cannot reach the Redis of SITEDIAG_STORE (${why}); nothing was sent to any vantage\n`);
    return EXIT.badInput;
  }
  try {
    return await diagnoseWith(fanout, kind, list, run, io);
  } finally {
    await fanout.close();
  }
}

async function diagnoseWith(
  fanout: VantageFanout,
  kind: "site-check" | "trace",
  list: string,
  run: DiagnoseRun,
  io: CommandIo,
): Promise<number> {
  const { args, signal } = run;
  // Membership is read before any job is sent; when the store fails it there, nothing has been checked.
  const storeFailure = (error: unknown) => {
    throw new StoreFailure(error instanceof Error ? error.message : String(error), { cause: error });
  };
  const alive = () => fanout.alive().catch(storeFailure);
  const known = () => fanout.known().catch(storeFailure);
  const service = { fanout: Object.assign({}, fanout, { alive, known }), deadlines: vantageDeadlinesFor(io.config) };
  try {
    return args.json ? await answerAsJson(service, kind, list, run, io) : await answerAsRows(service, kind, list, run, io);
  } catch (error) {
    if (signal.aborted) return reportInterrupted(io);
    const refusal =
      error instanceof ConnectError && error.code === Code.InvalidArgument ? (error.cause as PolicyRefusal | undefined) : undefined;
    if (refusal !== undefined) return reportRefusal(refusal, io);
    if (error instanceof StoreFailure) {
      io.stderr.write(`sitediag: --vantages: the Redis of SITEDIAG_STORE failed: ${error.message}; nothing was checked\n`);
      return EXIT.badInput;
    }
    throw error;
  }
}

/** `--json`: the unary answer, one document at the end, as the API's GET gives it. */
async function answerAsJson(service: VantageService, kind: "site-check" | "trace", list: string, run: DiagnoseRun, io: CommandIo) {
  const { args, signal } = run;
  const context = cliContext(
    kind === "site-check" ? DiagnosticsService.method.checkSite : DiagnosticsService.method.traceRedirects,
    signal,
  );
  let data: JsonObject;
  let answer: VantageSiteChecks | VantageTraces | undefined;
  if (kind === "site-check") {
    // A person's bare domain starts at https://, as in a plain check.
    const request = create(CheckSiteRequestSchema, {
      url: startingUrlText(args.target),
      details: args.details,
      vantages: [list],
      userAgent: userAgentValue(args.userAgent),
    });
    const response = await createVantageCheckSite(service)(request, context);
    answer = response.vantages;
    data = restData(CheckSiteResponseSchema, response);
  } else {
    const request = create(TraceRedirectsRequestSchema, {
      url: args.target,
      details: args.details,
      vantages: [list],
      userAgent: userAgentValue(args.userAgent),
    });
    const response = await createVantageTrace(service)(request, context);
    answer = response.vantages;
    data = restData(TraceRedirectsResponseSchema, response);
  }
  const vantages = data.vantages as JsonObject;
  const states = (Array.isArray(vantages.entries) ? (vantages.entries as JsonObject[]) : []).map(
    (entry) => (entry.vantage as JsonObject | undefined)?.state,
  );
  warnings(states.length, answer?.differences ?? [], io);
  io.stdout.write(`${jsonText(data)}\n`);
  return exitStatus(vantages.verdict as VantageVerdictId, states);
}

/**
 * For people: the announced stream (vantage-stream.ts), each vantage's row
 * printed as it answers, the ending when the service's verdict comes. The
 * table reads each answer's details (a proxy's words, the addresses that
 * differ) whatever --details says.
 */
async function answerAsRows(service: VantageService, kind: "site-check" | "trace", list: string, run: DiagnoseRun, io: CommandIo) {
  const { args, paint, signal } = run;
  const printer = startVantagePrinter(io.stdout, paint);
  const fields = { details: true, vantages: [list], userAgent: userAgentValue(args.userAgent), announce: true };
  const target = kind === "site-check" ? startingUrlText(args.target) : args.target;
  const messages =
    kind === "site-check"
      ? createVantageCheckSiteStream(service)(
          create(VantageCheckSiteRequestSchema, Object.assign({ url: target }, fields)),
          cliContext(DiagnosticsService.method.vantageCheckSite, signal),
        )
      : createVantageTraceStream(service)(
          create(VantageTraceRedirectsRequestSchema, Object.assign({ url: target }, fields)),
          cliContext(DiagnosticsService.method.vantageTraceRedirects, signal),
        );
  const states: string[] = [];
  try {
    for await (const message of messages) {
      if (message.asked !== undefined) printer.asked(message.asked);
      else if (message.entry !== undefined) {
        printer.entry(message.entry);
        states.push(stateName(message.entry.vantage?.state));
      } else if (message.verdict !== undefined) {
        printer.end(target, message.verdict, message.differences);
        warnings(states.length, message.differences, io);
        return exitStatus(verdictId(message.verdict) ?? "unavailable", states);
      }
    }
  } finally {
    printer.stop();
  }
  // The stream always ends with the verdict, unless the call was stopped (which throws before here).
  throw new Error("the vantages' stream ended without a verdict");
}

/** What goes to stderr beside the answer: nothing ran anywhere, only this machine ran, the builds differ. */
function warnings(entries: number, differences: readonly VantageDifference[], io: CommandIo): void {
  // Only `all` can come back empty: an empty table would hide that nothing ran anywhere.
  if (entries === 0)
    io.stderr.write(
      "sitediag: --vantages all: no vantage has a live instance (no serve's heartbeat in the Redis of SITEDIAG_STORE); nothing was checked\n",
    );
  // On the SQLite store nothing but this machine was asked, whatever the list said: never let a table pass for regions.
  if (io.config.store.kind === "sqlite")
    io.stderr.write(
      'sitediag: --vantages: SITEDIAG_STORE is the SQLite store, so only this machine ("local") was asked; set it to the deployment\'s Redis to ask its regions\n',
    );
  const builds = differences.find((difference) => difference.aspect === "version");
  if (builds !== undefined) io.stderr.write(`sitediag: warning: ${buildsWarning(builds)}\n`);
}

/** 0 up everywhere; 2 a target every vantage refused; 1 any other verdict. */
function exitStatus(verdict: VantageVerdictId, states: readonly unknown[]): number {
  if (states.length > 0 && states.every((state) => state === "refused")) return EXIT.badInput;
  return verdictNeedsALook(verdict) ? EXIT.broken : EXIT.healthy;
}

/** The handler context of a call from the command line: no door, the stop signal as the caller going away. */
function cliContext(method: DescMethod, signal: AbortSignal): HandlerContext {
  return createHandlerContext({
    service: DiagnosticsService,
    method,
    protocolName: "cli",
    requestMethod: "GET",
    url: "",
    requestSignal: signal,
  });
}

/** The store's Redis refused or failed a command the asking needs (an ACL without it, a Redis gone since the start). */
class StoreFailure extends Error {}
