import type { Readable } from "node:stream";

/**
 * A request's body as every door reads it (the REST door's JSON, Connect's
 * messages on all three RPC protocols). Iterating the request itself would
 * do the same until the reader stops early (a body past the size limit, a
 * message that does not decode): leaving a `for await` destroys the request,
 * which on HTTP/1.1 detaches it from its socket and on HTTP/2 resets its
 * stream, so the answer about to be written has nowhere to go, or throws.
 * Stopping here only stops reading: the request stays whole, paused, and
 * what is left of its body is for the early answer's close to deal with
 * (early-answer.ts).
 */
export function requestBody(request: Readable): AsyncIterable<Uint8Array> {
  return { [Symbol.asyncIterator]: () => bodyReader(request) };
}

/**
 * Thrown when the request ends before its body does: the client hung up or
 * reset its stream. The code is the one Node gives a client that hung up
 * (Connect answers it as aborted, not as a server fault); Node's own error,
 * if it gave one, is the cause.
 */
export class RequestAbortedError extends Error {
  readonly code = "ECONNRESET";
  constructor(cause?: unknown) {
    super("the client closed the request before its body was read", cause === undefined ? undefined : { cause });
  }
}

const DONE = { done: true, value: undefined } as const;

function bodyReader(request: Readable): AsyncIterator<Uint8Array> {
  let stopped = false;
  let failure: unknown = null;
  let wake: (() => void) | undefined;
  const onEvent = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  const onError = (error: unknown) => {
    failure = error;
    onEvent();
  };
  request.on("readable", onEvent);
  request.on("end", onEvent);
  request.on("close", onEvent);
  request.on("error", onError);
  const stop = () => {
    if (stopped) return;
    stopped = true;
    request.off("readable", onEvent);
    request.off("end", onEvent);
    request.off("close", onEvent);
    request.off("error", onError);
    onEvent();
  };
  return {
    async next(): Promise<IteratorResult<Uint8Array>> {
      for (;;) {
        if (stopped) return DONE;
        const chunk = request.read() as Buffer | null;
        if (chunk !== null) return { done: false, value: chunk };
        if (request.readableEnded) {
          stop();
          return DONE;
        }
        if (failure !== null || request.destroyed) {
          stop();
          throw new RequestAbortedError(failure ?? undefined);
        }
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    async return(): Promise<IteratorResult<Uint8Array>> {
      stop();
      return DONE;
    },
  };
}
