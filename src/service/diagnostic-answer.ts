import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { DiagnosticOutcome } from "../diagnostics/diagnostic-call.js";
import { overloadAnswer } from "./overload-answer.js";

/**
 * Runs a diagnostic and turns its outcome into the RPC answer, the same way
 * for both operations: a result becomes the response message; a refusal an
 * invalid_argument whose cause is the refusal value (so a door can name the
 * rule without parsing the message); a cancellation canceled; an overload the
 * retryable, uncharged answer of overload-answer.ts. A throw is a
 * defect of ours: a 500 that keeps its internal message from the caller.
 */
export async function answerDiagnostic<R, M>(run: () => Promise<DiagnosticOutcome<R>>, toMessage: (result: R) => M, defect: string, context: HandlerContext): Promise<M> {
  let outcome: DiagnosticOutcome<R>;
  try {
    outcome = await run();
  } catch (cause) {
    throw new ConnectError(defect, Code.Internal, undefined, undefined, cause);
  }
  switch (outcome.kind) {
    case "result":
      return toMessage(outcome.result);
    case "refused":
      throw new ConnectError(outcome.refusal.reason, Code.InvalidArgument, undefined, undefined, outcome.refusal);
    case "cancelled":
      throw ConnectError.from(outcome.reason, Code.Canceled);
    case "overloaded":
      throw overloadAnswer(outcome.overload, context);
  }
}
