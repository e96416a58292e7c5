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
  /** Retry-After of the refusal, in seconds. */
  readonly retryAfterSeconds?: number;
  readonly observer?: InflightObserver;
}

export interface InflightLimit {
  readonly interceptor: Interceptor;
  /** Calls holding a slot now. */
  inflight(): number;
}

// Most checks end within a second or two; a client retrying sooner would only be turned away again.
const DEFAULT_RETRY_AFTER_SECONDS = 2;

/**
 * Caps the diagnostics running at once on this instance. Each probes
 * targets for up to 30 s, so an unbounded number would let a burst of calls
 * exhaust sockets and memory. Placed before the access interceptor, a call
 * over the cap is refused with Unavailable (503 on REST and Connect) and a
 * Retry-After before its key is looked up, so it costs nothing.
 */
export function createInflightLimit(options: InflightLimitOptions): InflightLimit {
  const retryAfter = String(options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS);
  let inflight = 0;
  const interceptor: Interceptor = (next) => async (req) => {
    if (inflight >= options.max) {
      options.observer?.rejected(req.method.name);
      const message = `the server is running its limit of ${options.max} checks at once; retry in ${retryAfter} seconds (nothing was charged)`;
      throw new ConnectError(message, Code.Unavailable, { "retry-after": retryAfter });
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
  return { interceptor, inflight: () => inflight };
}
