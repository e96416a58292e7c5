import type { Overload } from "../../probe/overload.js";
import type { PolicyRefusal } from "../../shared/failures.js";
import type { DiagnosticRunner } from "../../runner/diagnostic-runner.js";
import { diagnosticRunnerFromConfig } from "../../runner/runner-from-config.js";
import { flag, readArguments, text, usageProblem } from "../arguments.js";
import { type CommandIo, EXIT_FAILED, EXIT_OK, EXIT_USAGE, readConfiguredCa } from "../command.js";
import { terminalText } from "../report/terminal-safe.js";
import { createPaint, type Paint, wantsColour } from "../report/terminal-text.js";
import type { UserAgentId } from "../../shared/user-agents.js";
import { userAgentFromText } from "../../shared/user-agent-option.js";

/** Exit codes of `sitediag check` and `sitediag trace`. */
export const EXIT = {
  /** The site is up, or the chain is Healthy / Redirects detected. */
  healthy: EXIT_OK,
  /** The site is down, or the trace calls for investigation: its chain status, or a warning of severity problem. */
  broken: EXIT_FAILED,
  /** The command line, the configuration or the target was refused: unknown flag, no URL, a URL the policy will not visit. */
  badInput: EXIT_USAGE,
  /** A stop signal (Ctrl-C) ended the diagnostic early; 128 + SIGINT, as shells report it. */
  interrupted: 130,
} as const;

export interface DiagnoseArgs {
  readonly target: string;
  readonly json: boolean;
  /** `--details`: with --json, add the API's `details` object (details=true); the report always shows them. */
  readonly details: boolean;
  /** `--headers`: the report shows each request's response header fields (with --json, `details` carries them). */
  readonly headers: boolean;
  /** `--vantages LIST`: the diagnostic from each vantage named (vantage-diagnose.ts); undefined for the plain run. */
  readonly vantages: string | undefined;
  /** `--user-agent`: whose User-Agent every request sends (browser unless given). */
  readonly userAgent: UserAgentId;
}

export interface DiagnoseRun {
  readonly args: DiagnoseArgs;
  /** In this process: one run, one caller. */
  readonly runner: DiagnosticRunner;
  readonly paint: Paint;
  /** Aborted by the first stop signal. */
  readonly signal: AbortSignal;
}

/**
 * The part `check` and `trace` share: parse `[--json] URL`, build the
 * runner from the Config as `serve` does (allowCidrs, dnsServers, the CA
 * file, timeouts, trace ports), turn a stop signal into an abort, run, and
 * close the runner whatever happens.
 */
export async function runDiagnoseCommand(
  argv: readonly string[],
  io: CommandIo,
  help: string,
  diagnose: (run: DiagnoseRun) => Promise<number>,
): Promise<number> {
  const parsed = parseDiagnoseArgs(argv);
  if (parsed.kind === "help") {
    io.stdout.write(help);
    return EXIT.healthy;
  }
  if (parsed.kind === "usage") {
    io.stderr.write(usageProblem(commandOf(help), parsed.problem));
    return EXIT.badInput;
  }
  const paint = createPaint(!parsed.args.json && wantsColour(io.stdout, io.env ?? process.env));
  return withDiagnosticRunner(io, (runner, signal) => diagnose({ args: parsed.args, runner, paint, signal }));
}

/**
 * What every local diagnostic command shares: the runner built from the
 * Config as `serve` builds it (allowCidrs, dnsServers, the CA file, timeouts,
 * trace ports) but in this process, a stop signal turned into an abort, and
 * the runner closed whatever happens. A run that throws because of the signal reports
 * the interruption; one that returns says so itself.
 */
export async function withDiagnosticRunner(
  io: CommandIo,
  run: (runner: DiagnosticRunner, signal: AbortSignal) => Promise<number>,
): Promise<number> {
  const ca = readConfiguredCa(io);
  if (ca === false) return EXIT.badInput;
  // One run, one caller: no other work shares this loop, so the probe stays on it (no thread to start).
  // A defect's line goes to stderr: stdout holds the answer (JSON with --json), which a log line would break.
  const runner = diagnosticRunnerFromConfig(Object.assign({}, io.config, { probeThreads: 0 }), ca, {
    onProbeDefect: (defect) =>
      io.stderr.write(
        `internal probe error at ${defect.stage} for ${terminalText(defect.host)}: ${terminalText(defect.error instanceof Error ? String(defect.error.cause ?? defect.error.message) : String(defect.error))}\n`,
      ),
  });
  const stop = new AbortController();
  const unsubscribe = io.onStopSignal(() => stop.abort(new Error("stopped by a signal")));
  try {
    return await run(runner, stop.signal);
  } catch (error) {
    // A diagnostic throws only when its signal ends it (or on a defect, which goes on up).
    if (!stop.signal.aborted) throw error;
    return reportInterrupted(io);
  } finally {
    unsubscribe();
    await runner.close();
  }
}

/** A refused target: nothing was sent to it. The REST door answers 400 for the same input. */
export function reportRefusal(refusal: PolicyRefusal, io: CommandIo): number {
  const range = refusal.range === undefined ? "" : `range ${refusal.range.cidr} (${refusal.range.name}, ${refusal.range.rfc})\n`;
  io.stderr.write(
    `refused (${refusal.rule}): ${terminalText(refusal.reason)}\ncode ${refusal.code}\n${range}nothing was sent to the target\n`,
  );
  return EXIT.badInput;
}

/** Our own capacity kept the diagnostic from a verdict (it could not start in time); unreachable with the probe on this loop, said plainly if it ever is. */
export function reportOverloaded(overload: Overload, io: CommandIo): number {
  io.stderr.write(`no verdict (${overload.why}): ${overload.detail}; nothing about the target is known, try again\n`);
  return EXIT.broken;
}

export function reportInterrupted(io: CommandIo): number {
  io.stderr.write("interrupted: the diagnostic was stopped before it finished\n");
  return EXIT.interrupted;
}

type Parsed =
  | { readonly kind: "run"; readonly args: DiagnoseArgs }
  | { readonly kind: "help" }
  | { readonly kind: "usage"; readonly problem: string };

function parseDiagnoseArgs(argv: readonly string[]): Parsed {
  // Help asked for is the answer, whatever else the line holds (`trace --batch FILE --help`).
  if (argv.some((arg) => arg === "--help" || arg === "-h")) return { kind: "help" };
  const read = readArguments(
    argv,
    {
      json: { type: "boolean" },
      details: { type: "boolean" },
      headers: { type: "boolean" },
      vantages: { type: "string" },
      "user-agent": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    true,
    BATCH_ONLY,
  );
  if (!read.ok) return { kind: "usage", problem: read.problem };
  const { values, positionals } = read;
  const [target, ...extra] = positionals;
  if (target === undefined) return { kind: "usage", problem: "a URL is required" };
  if (extra.length > 0)
    return { kind: "usage", problem: `one URL at a time; also got ${extra.map((item) => JSON.stringify(item)).join(", ")}` };
  const userAgent = userAgentFromText(text(values, "user-agent"));
  if (!userAgent.ok) return { kind: "usage", problem: userAgent.problem };
  return {
    kind: "run",
    args: {
      target,
      json: flag(values, "json"),
      details: flag(values, "details"),
      headers: flag(values, "headers"),
      vantages: text(values, "vantages"),
      userAgent: userAgent.id,
    },
  };
}

/** Options of `trace --batch FILE`, said as such when given to a single check or trace. */
const BATCH_ONLY: Readonly<Record<string, string>> = {
  batch: "is trace's: a list of URLs is traced with sitediag trace --batch FILE",
  csv: "goes with sitediag trace --batch FILE",
  "rerun-failed": "goes with sitediag trace --batch FILE",
  "include-refused": "goes with sitediag trace --batch FILE --rerun-failed",
  "max-redirects": "goes with sitediag trace --batch FILE",
};

/** `sitediag trace` from the first line of a command's help (`usage: sitediag trace ...`). */
export function commandOf(help: string): string {
  return /^usage: (sitediag [a-z-]+)/.exec(help)?.[1] ?? "sitediag";
}
