import { TraceRedirectsResponseSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { renderMessage } from "../server/rest/rest-render.js";
import { toTraceRedirectsResponse } from "../service/trace-redirects.js";
import type { Command, CommandIo } from "./command.js";
import { runBatchTrace } from "./diagnose/batch-trace.js";
import { EXIT, reportInterrupted, reportOverloaded, reportRefusal, runDiagnoseCommand } from "./diagnose/diagnose-command.js";
import { renderTrace, traceIsHealthy } from "./report/diagnostic-report.js";
import { diagnoseFromVantages } from "./diagnose/vantage-diagnose.js";
import { headerLines, traceLabels } from "./report/request-lines.js";
import { jsonText, terminalSafe } from "./report/terminal-safe.js";
import { userAgentOptionOf } from "../shared/user-agent-option.js";
import { userAgentLine } from "./report/user-agent-line.js";
import { COMMAND_NAMES } from "./command-names.js";

const HELP = `usage: sitediag trace [--json] URL
       sitediag trace --headers URL
       sitediag trace --json --details URL
       sitediag trace --batch FILE [--json | --csv] [--max-redirects N]
                      [--rerun-failed [--include-refused]] [--user-agent NAME]
       sitediag trace --user-agent googlebot|bingbot|browser URL
       sitediag trace --vantages all|NAME,... [--json [--details]] URL

Where does this URL really redirect? Runs the redirect-check diagnostic from
this machine, with the same engine and target policy as the service (no
server, no key, no credits), and prints the chain hop by hop with timings per
phase, the certificates (with their expiry), the failure code, the proxy that
answered and a client-side redirect on the final page (found by one extra GET
of it), then the warnings. A bare domain starts at https://.

With --batch, every row of FILE (CSV: url[,expected final URL]; "-" reads
standard input; a first row "url,..." is a header) is traced, eight at a time.
A row with an expected URL passes when its chain ends there with a 2xx and
every redirect on the way is permanent (301/308), never going from https to
http. A row fails (PASS/FAIL, with its reason and code) when it could not be
traced, its chain broke, it missed its expected URL or it ended in a 4xx/5xx,
or its final page asks not to be indexed, reads as "not found", or is the home
page a deep URL was sent to (unless expected): the page's rule. Progress and a table on a terminal; --json prints one NDJSON
line per row as it completes; --csv the page's CSV (verdict, code, reason,
final status, hops, chain). A column max_redirects (named in a header) holds a
row to that many redirects at most; a longer chain fails as chain_too_long.

  --json          print the result exactly as the API's "data" object
  --details       with --json: as the API answers details=true (adds "details")
  --headers       also print each response's header fields (Set-Cookie values redacted)
  --batch FILE    trace every row of a CSV file (a site migration audit)
  --csv           with --batch: print every row as CSV instead of the table
  --max-redirects N  with --batch: a row whose chain takes more than N redirects
                  (0 to 20) fails as chain_too_long; a row's max_redirects wins
  --rerun-failed  with --batch and a CSV that --csv (or the page) wrote: trace
                  again only the rows whose verdict was not PASS, but those
                  refused at input (code input_*: they cannot trace as written)
  --include-refused  with --rerun-failed: the rows refused at input too
  --user-agent NAME  send Googlebot's or Bingbot's documented User-Agent instead
                  of sitediag's own (browser, the default), as the API's
                  user_agent=, to every row with --batch: a site that redirects
                  or blocks by User-Agent shows it
  --vantages      the trace from each vantage named (or all), as the API's
                  vantages=: a row per vantage as it answers (a terminal also
                  shows those still out and the deadline), then the verdict.
                  SITEDIAG_STORE on Redis: the deployment's vantages; all is
                  every one seen within SITEDIAG_VANTAGE_FORGET_AFTER (a silent
                  one is its row's unavailable at once). The SQLite store (the
                  default): one vantage, this machine, "local"; another name is
                  unavailable
  -h, --help      show this help

exit status: 0 Healthy or Redirects detected with no problem warning (every row passes,
               with --batch),
             1 any other chain status, or a problem warning such as an https -> http
               downgrade or a final 4xx/5xx (any row fails, with --batch),
             2 bad input or a refused target;
             with --vantages: 0 up_everywhere (every vantage asked answered), 1 any
               other verdict (up_where_answered too), 2 bad input or a target every
               vantage refused
`;

/** `sitediag trace URL`: redirect-check, run directly; `--batch FILE` for many. */
export const traceCommand = {
  name: COMMAND_NAMES.trace.name,
  summary: COMMAND_NAMES.trace.summary,
  run: (argv, io) => (isBatch(argv) ? runBatchTrace(argv, io, HELP) : traceOne(argv, io)),
} satisfies Command;

/** `--batch` asked for, unless help is (traceOne prints help on stdout, whatever else the line holds). */
function isBatch(argv: readonly string[]): boolean {
  return argv.some((arg) => arg === "--batch" || arg.startsWith("--batch=")) && !argv.some((arg) => arg === "--help" || arg === "-h");
}

function traceOne(argv: readonly string[], io: CommandIo): Promise<number> {
  return runDiagnoseCommand(argv, io, HELP, async (run) => {
    if (run.args.vantages !== undefined) return diagnoseFromVantages("trace", run.args.vantages, run, io);
    const { args, runner, paint, signal } = run;
    // The report always shows details, each request with its report facts; --json only when asked, so it stays the API's plain answer.
    const outcome = await runner.traceRedirects(
      args.target,
      signal,
      Object.assign({ details: !args.json || args.details, report: !args.json }, userAgentOptionOf(args.userAgent)),
    );
    switch (outcome.kind) {
      case "refused":
        return reportRefusal(outcome.refusal, io);
      case "cancelled":
        return reportInterrupted(io);
      case "overloaded":
        return reportOverloaded(outcome.overload, io);
      case "result": {
        const { result } = outcome;
        if (args.json) io.stdout.write(`${jsonText(renderMessage(TraceRedirectsResponseSchema, toTraceRedirectsResponse(result)))}\n`);
        else {
          // The report renders from a copy whose every string is safe for a terminal: most of them are the target's.
          const shown = terminalSafe(result);
          io.stdout.write(renderTrace(shown, paint));
          if (args.headers) io.stdout.write(headerLines(traceLabels(shown.details?.requests ?? []), paint));
          io.stdout.write(userAgentLine(args.userAgent, paint));
        }
        return traceIsHealthy(result) ? EXIT.healthy : EXIT.broken;
      }
    }
  });
}
