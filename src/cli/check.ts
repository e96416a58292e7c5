import { CheckSiteResponseSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { renderMessage } from "../server/rest/rest-render.js";
import { startingUrlText } from "../diagnostics/starting-url.js";
import { siteCheckMessage } from "../service/check-site.js";
import type { Command } from "./command.js";
import { EXIT, reportInterrupted, reportOverloaded, reportRefusal, runDiagnoseCommand } from "./diagnose/diagnose-command.js";
import { checkIsHealthy, renderSiteCheck } from "./report/diagnostic-report.js";
import { diagnoseFromVantages } from "./diagnose/vantage-diagnose.js";
import { checkLabels, headerLines } from "./report/request-lines.js";
import { jsonText, terminalSafe } from "./report/terminal-safe.js";
import { userAgentOptionOf } from "../shared/user-agent-option.js";
import { userAgentLine } from "./report/user-agent-line.js";
import { COMMAND_NAMES } from "./command-names.js";

const HELP = `usage: sitediag check [--json] URL
       sitediag check --headers URL
       sitediag check --json --details URL
       sitediag check --vantages all|NAME,... [--json [--details]] URL
       sitediag check --user-agent googlebot|bingbot|browser URL

URL may be a bare domain (example.com, example.com/path): it is checked
from https://, and the report's first line shows the URL checked.

Is this site up or down, and why? Runs the is-site-down diagnostic from this
machine, with the same engine and target policy as the service (no server, no
key, no credits), and prints the verdict, the reason, each request with its
timings per phase, the certificates (with their expiry), the failure code,
the proxy that answered and a client-side redirect, if any.

  --json      print the result exactly as the API's "data" object
  --details   with --json: as the API answers details=true (adds "details")
  --headers   also print each response's header fields (Set-Cookie values redacted)
  --user-agent NAME  send Googlebot's or Bingbot's documented User-Agent instead of
              sitediag's own (browser, the default), as the API's user_agent=,
              to see a site that redirects or blocks by User-Agent
  --vantages  the check from each vantage named (or all), as the API's vantages=:
              a row per vantage as it answers (a terminal also shows those
              still out and the deadline), then the verdict over them.
              SITEDIAG_STORE on Redis: the deployment's vantages; all is every
              one seen within SITEDIAG_VANTAGE_FORGET_AFTER (a silent one is its
              row's unavailable at once). The SQLite store (the default): one
              vantage, this machine, "local"; another name is unavailable
  -h, --help  show this help

exit status: 0 up (also CHALLENGED / BLOCKED: a proxy's challenge or block answered,
               which the API counts as up), 1 down, or up with a warning of
               severity problem (certificate_revoked), 2 bad input or a refused target;
             with --vantages: 0 up_everywhere (every vantage asked answered), 1 any
               other verdict (up_where_answered too), 2 bad input or a target every
               vantage refused
`;

/** `sitediag check URL`: is-site-down, run directly. */
export const checkCommand = {
  name: COMMAND_NAMES.check.name,
  summary: COMMAND_NAMES.check.summary,
  run: (argv, io) =>
    runDiagnoseCommand(argv, io, HELP, async (run) => {
      if (run.args.vantages !== undefined) return diagnoseFromVantages("site-check", run.args.vantages, run, io);
      const { args, runner, paint, signal } = run;
      // The report always shows details, each request with its report facts; --json only when asked, so it stays the API's plain answer.
      // A person's bare domain starts at https://, as in trace; the report's first line shows the URL checked.
      const outcome = await runner.checkSite(
        startingUrlText(args.target),
        signal,
        Object.assign({ details: !args.json || args.details, report: !args.json }, userAgentOptionOf(args.userAgent)),
      );
      if (outcome.kind === "refused") return reportRefusal(outcome.refusal, io);
      if (outcome.kind === "cancelled") return reportInterrupted(io);
      if (outcome.kind === "overloaded") return reportOverloaded(outcome.overload, io);
      const { result } = outcome;
      if (args.json) io.stdout.write(`${jsonText(renderMessage(CheckSiteResponseSchema, siteCheckMessage(result)))}\n`);
      else {
        // The report renders from a copy whose every string is safe for a terminal: most of them are the target's.
        const shown = terminalSafe(result);
        io.stdout.write(renderSiteCheck(shown, paint));
        if (args.headers) io.stdout.write(headerLines(checkLabels(shown.details?.requests ?? []), paint));
        io.stdout.write(userAgentLine(args.userAgent, paint));
      }
      return checkIsHealthy(result) ? EXIT.healthy : EXIT.broken;
    }),
} satisfies Command;
