/** What a caller may ask of each diagnostic beyond its input; plain data, so a call can cross to a diagnostic thread as it is. */

/** What both diagnostics take alike. */
interface CallOptions {
  /**
   * When the call's time limits count from, on the shared clock: when it was
   * asked for (the call's arrival at the service, or its hand-over to a
   * diagnostic thread), so the caller hears by its deadline however long the
   * call waited to start. is-site-down: its first request's timeout (later
   * requests count from when they are sent); redirect-check: its whole-trace
   * budget. Undefined: from when the diagnostic starts.
   */
  readonly timeoutsFrom?: number | undefined;
  /**
   * Keep every request's full outcome in the result's `attempts` (true when
   * undefined): what the CLI's tables show. False leaves `attempts` empty;
   * the service asks for false, as it renders none of it, and from a probe
   * thread those outcomes are most of what would cross back (cloned there,
   * read here: docs/benchmarks.md).
   */
  readonly attempts?: boolean;
}

export interface SiteCheckOptions extends CallOptions {
  /**
   * Add `details` to the result: every request, the failure code, the proxy,
   * a client-side redirect (which costs reading up to 64 KiB of each body).
   */
  readonly details?: boolean;
}

export interface TraceOptions extends CallOptions {
  /**
   * Add `details` to the result: every request, the failure code, the proxy,
   * and a client-side redirect on the final page (one extra bounded GET of it).
   */
  readonly details?: boolean;
}
