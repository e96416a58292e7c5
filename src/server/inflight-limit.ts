import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

/** Told when a slot is taken, given back, or refused; metrics listen here. */
export interface InflightObserver {
  admitted(): void;
  released(): void;
  rejected(operation: string): void;
}

export interface InflightLimitOptions {
  /** SITEDIAG_MAX_INFLIGHT: calls allowed past this point at once. */
  readonly max: number;
  readonly observer?: InflightObserver;
}

// Retry-After of the refusal: most checks end within a second or two; a client retrying sooner would only be turned away again.
const RETRY_AFTER = "2";

/**
 * Caps the diagnostics running at once on this instance. Each probes
 * targets for up to 30 s, so an unbounded number would let a burst of calls
 * exhaust sockets and memory. Placed before the access interceptor, a call
 * over the cap is refused with Unavailable (503 on REST and Connect) and a
 * Retry-After before its key is looked up, so it costs nothing.
 */
export function createInflightLimit(options: InflightLimitOptions): Interceptor {
  let inflight = 0;
  return (next) => async (req) => {
    if (inflight >= options.max) {
      options.observer?.rejected(req.method.name);
      const message = `the server is running its limit of ${options.max} checks at once; retry in ${RETRY_AFTER} seconds (nothing was charged)`;
      throw new ConnectError(message, Code.Unavailable, { "retry-after": RETRY_AFTER });
    }
    inflight += 1;
    options.observer?.admitted();
    try {
      return await next(req);
    } finally {
      inflight -= 1;
      options.observer?.released();
    }
  };
}
