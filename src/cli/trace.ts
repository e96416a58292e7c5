import { TraceRedirectsResponseSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { traceRedirects } from "../diagnostics/redirect-trace.js";
import { renderMessage } from "../server/rest-render.js";
import { toTraceRedirectsResponse } from "../service/trace-redirects.js";
import type { Command } from "./command.js";
import { EXIT, reportInterrupted, reportRefusal, runDiagnoseCommand } from "./report/diagnose-command.js";
import { createHopRecorder } from "./report/hop-recorder.js";
import { HEALTHY_CHAINS, renderTrace } from "./report/trace-report.js";

const HELP = `usage: sitediag trace [--json] URL

Where does this URL really redirect? Runs the redirect-check diagnostic from
this machine, with the same engine and target policy as the service (no
server, no key, no credits), and prints the chain hop by hop with timings per
phase, then the warnings. A bare domain starts at https://.

  --json      print the result exactly as the API's "data" object
  -h, --help  show this help

exit status: 0 Healthy or Redirects detected, 1 any other chain status,
             2 bad input or a refused target
`;

/** `sitediag trace URL`: redirect-check, run directly. */
export const traceCommand = {
  name: "trace",
  summary: "where does this URL really redirect, hop by hop? (redirect-check, run from here)",
  run: (argv, io) =>
    runDiagnoseCommand(argv, io, HELP, async ({ args, env, paint, signal }) => {
      const recorder = createHopRecorder(env.prober);
      const outcome = await traceRedirects(args.target, { ...env, prober: recorder.prober }, signal);
      switch (outcome.kind) {
        case "refused":
          return reportRefusal(outcome.refusal, io);
        case "cancelled":
          return reportInterrupted(io);
        case "result": {
          const { result } = outcome;
          io.stdout.write(args.json ? `${JSON.stringify(renderMessage(TraceRedirectsResponseSchema, toTraceRedirectsResponse(result)))}\n` : renderTrace(result, recorder.positions(), paint));
          return HEALTHY_CHAINS.has(result.chainStatus) ? EXIT.healthy : EXIT.broken;
        }
      }
    }),
} satisfies Command;
