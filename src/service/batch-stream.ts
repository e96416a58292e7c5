import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { type BatchItemError, BatchItemErrorSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { PolicyRefusal } from "../shared/failures.js";

/**
 * Runs `work` for every item with at most `concurrency` running at once, and
 * yields each result as soon as it is ready (completion order, so one slow
 * item never holds back the others). When `signal` aborts (the caller went
 * away, the server stops) no new item starts and the generator ends; the
 * items already running see the same signal and end by themselves.
 */
export async function* completionOrder<I, O>(
  items: readonly I[],
  concurrency: number,
  signal: AbortSignal,
  work: (item: I, index: number) => Promise<O>,
): AsyncGenerator<O> {
  const done: O[] = [];
  let wake: (() => void) | undefined;
  const wakeUp = () => {
    wake?.();
    wake = undefined;
  };
  let next = 0;
  let running = 0;
  let defect: { readonly error: unknown } | undefined;
  const start = () => {
    while (running < concurrency && next < items.length && !signal.aborted) {
      const index = next++;
      running += 1;
      // Each item's failure is a value in its result; a rejection is a defect of ours and ends the stream.
      work(items[index] as I, index).then(
        (result) => {
          running -= 1;
          done.push(result);
          wakeUp();
        },
        (error: unknown) => {
          running -= 1;
          defect ??= { error };
          wakeUp();
        },
      );
    }
  };
  signal.addEventListener("abort", wakeUp, { once: true });
  try {
    start();
    while (running > 0 || done.length > 0) {
      if (done.length === 0 && defect === undefined) await new Promise<void>((resolve) => (wake = resolve));
      if (defect !== undefined) throw defect.error;
      if (signal.aborted) return;
      const result = done.shift();
      if (result !== undefined) yield result;
      start();
    }
  } finally {
    signal.removeEventListener("abort", wakeUp);
  }
}

export { batchSizeProblem } from "../shared/batch.js";

/** An item's error as the stream carries it: the Connect code name and the message, as the error envelope has them. */
export function itemError(error: ConnectError): BatchItemError {
  return create(BatchItemErrorSchema, { code: codeToString(error.code), message: error.rawMessage });
}

/** What a single-URL handler threw, as the item error it becomes; the item's own failure never fails the stream. */
export function asItemError(reason: unknown): BatchItemError {
  if (!(reason instanceof ConnectError)) return itemError(new ConnectError("The item could not be completed", Code.Internal));
  // answerDiagnostic gives a refusal as the error's cause: the item carries its input_* code.
  const refusal = refusalOf(reason.cause);
  return refusal === undefined ? itemError(reason) : refusedItemError(refusal);
}

function refusalOf(cause: unknown): PolicyRefusal | undefined {
  if (typeof cause !== "object" || cause === null || !("code" in cause) || !("reason" in cause) || !("rule" in cause)) return undefined;
  return typeof cause.code === "string" && typeof cause.reason === "string" && cause.code.startsWith("input_")
    ? (cause as PolicyRefusal)
    : undefined;
}

/** An item whose URL the target policy refused: invalid_argument, as a single call's 400, with the refusal's own code (input_invalid_url, ...). */
export function refusedItemError(refusal: PolicyRefusal): BatchItemError {
  return create(BatchItemErrorSchema, { code: codeToString(Code.InvalidArgument), message: refusal.reason, refusalCode: refusal.code });
}
