import { Code, ConnectError } from "@connectrpc/connect";
import type { PolicyRefusal } from "../probe/refusal.js";

/** How both diagnostics end: a result, a refusal of the caller's input, or a caller who went away. */
export type DiagnosticOutcome<R> =
  | { readonly kind: "result"; readonly result: R }
  | { readonly kind: "refused"; readonly refusal: PolicyRefusal }
  | { readonly kind: "cancelled"; readonly reason: unknown };

/**
 * Runs a diagnostic and turns its outcome into the RPC answer, the same way
 * for both operations: a result becomes the response message; a refusal an
 * invalid_argument whose cause is the refusal value (so a door can name the
 * rule without parsing the message); a cancellation canceled. A throw is a
 * defect of ours: a 500 that keeps its internal message from the caller.
 */
export async function answerDiagnostic<R, M>(run: () => Promise<DiagnosticOutcome<R>>, toMessage: (result: R) => M, defect: string): Promise<M> {
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
  }
}
