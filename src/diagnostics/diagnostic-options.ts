/** What a caller may ask of each diagnostic beyond its input; plain data, so a call can cross to a diagnostic thread as it is. */

export interface SiteCheckOptions {
  /**
   * Add `details` to the result: every request, the failure code, the proxy,
   * a client-side redirect (which costs reading up to 64 KiB of each body).
   */
  readonly details?: boolean;
  /**
   * When the first request's timeout starts, on the shared clock (the call's
   * arrival at the service): the caller gets the answer env.siteTimeoutMs
   * after asking, however long taking the call in took. Later requests count
   * from when they are sent. Undefined: from when the first is sent.
   */
  readonly timeoutsFrom?: number | undefined;
  /**
   * Keep every request's full outcome in the result's `attempts` (true when
   * undefined): what the CLI's tables show. False leaves `attempts` empty;
   * the service asks for false, as it renders none of it, and from a probe
   * thread those outcomes are most of what would cross back (measured: about
   * 50 us of CPU per five-request check to clone and read them).
   */
  readonly attempts?: boolean;
}

export interface TraceOptions {
  /**
   * Add `details` to the result: every request, the failure code, the proxy,
   * and a client-side redirect on the final page (one extra bounded GET of it).
   */
  readonly details?: boolean;
  /**
   * When the whole-trace budget (env.traceTotalTimeoutMs) starts, on the
   * shared clock: a trace handed to a diagnostic thread counts from when it
   * was asked for, not from when the thread got to it. Undefined: from the call.
   */
  readonly budgetFrom?: number | undefined;
  /**
   * Keep every request's full outcome in the result's `attempts` (true when
   * undefined): what the CLI's tables show. False leaves `attempts` empty;
   * the service asks for false, as it renders none of it, and from a probe
   * thread those outcomes are most of what would cross back (measured: about
   * 50 us of CPU per five-request check to clone and read them).
   */
  readonly attempts?: boolean;
}
