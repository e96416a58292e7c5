import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { callRefundKey } from "../access/call-price.js";
import type { DiagnosticOutcome } from "../diagnostics/diagnostic-call.js";
import type { Overload } from "../probe/overload.js";
import { callOf } from "./call.js";

/**
 * Runs a diagnostic and turns its outcome into the RPC answer, the same way
 * for both operations: a result becomes the response message; a refusal an
 * invalid_argument whose cause is the refusal value (so a door can name the
 * rule without parsing the message); a cancellation canceled; an overload the
 * retryable, uncharged answer of overloadAnswer below. A throw is a
 * defect of ours: a 500 that keeps its internal message from the caller.
 */
export async function answerDiagnostic<R, M>(
  run: () => Promise<DiagnosticOutcome<R>>,
  toMessage: (result: R) => M,
  defect: string,
  context: HandlerContext,
): Promise<M> {
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

/** Seconds a caller is told to wait: the probe queue's own (a replacement thread boots, a burst drains, within about one). */
const OVERLOAD_RETRY_AFTER = "1";

/**
 * The one answer to a diagnostic our own capacity kept from a verdict:
 * Unavailable (503 on REST and Connect) with a Retry-After, as the probe
 * queue's refusal, and the diagnostic's price given back (the access
 * interceptor does it once the call is over). Never a word on the target: the
 * caller may retry the same call; we never run it again ourselves. Each call
 * of this is one diagnostic not run: call it once per diagnostic.
 */
export function overloadAnswer(overload: Overload, context: HandlerContext): ConnectError {
  context.values.get(callRefundKey)?.unit();
  callOf(context)?.report.overloaded(overload);
  const message = `the service could not run this check in time (${overload.detail}); nothing is known about the target; retry in ${OVERLOAD_RETRY_AFTER} second (nothing was charged)`;
  return new ConnectError(message, Code.Unavailable, { "retry-after": OVERLOAD_RETRY_AFTER }, undefined, overload);
}
