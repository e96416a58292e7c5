import type { SiteCheckOptions, TraceOptions } from "../diagnostics/diagnostic-call.js";
import type { RedirectTraceOutcome } from "../diagnostics/redirect-trace-result.js";
import type { SiteCheckOutcome } from "../diagnostics/site-check-result.js";
import type { AbortWatch } from "../probe/clock.js";

// The seam between "one diagnostic from several vantages" (the operation: its
// field, its answer, its credits) and the engine that carries a diagnostic to
// where a vantage runs it (in this process, or over Redis Streams to the
// instances of another region). The operation reads only this file.

/** A vantage as its own instances announce it: a name callers ask for, and words people read. */
export interface VantageInfo {
  /** SITEDIAG_VANTAGE: lower-case letters, digits and '-' (e.g. `eu-west`); `local` by default. */
  readonly name: string;
  /** A human label ("Frankfurt, EU West"); absent when the vantage's instances set none. */
  readonly label?: string | undefined;
  /** Where it stands, free text ("Frankfurt, DE"); absent when not set. */
  readonly location?: string | undefined;
  /** The build its newest instance runs (the package version, or SITEDIAG_VANTAGE_VERSION); absent when not announced. */
  readonly version?: string | undefined;
}

/** One instance of a vantage, as its own heartbeat left it. */
export interface KnownInstance {
  readonly id: string;
  /** Epoch ms of its last heartbeat, by its own clock. */
  readonly lastSeen: number;
  readonly live: boolean;
  readonly version: string | undefined;
  /** Its clock minus the Redis server's at its last heartbeat (ms); undefined when not known. */
  readonly clockOffsetMs: number | undefined;
}

/** A vantage seen within the retention window (SITEDIAG_VANTAGE_FORGET_AFTER), live or not. */
export interface KnownVantage {
  readonly info: VantageInfo;
  readonly live: boolean;
  /** Epoch ms of the newest heartbeat of any of its instances. */
  readonly lastSeen: number;
  readonly instances: readonly KnownInstance[];
}

/**
 * One diagnostic as it travels to a vantage: the caller's input and options
 * only. Never the caller's key or identity, never limits: the vantage that
 * runs it applies its own address policy and its own limits.
 */
export type VantageJob =
  | { readonly kind: "site-check"; readonly raw: string; readonly options: SiteCheckOptions }
  | { readonly kind: "trace"; readonly raw: string; readonly options: TraceOptions };

/** The outcome a job of that kind comes back with. */
export type VantageOutcomeOf<J extends VantageJob> = J extends { readonly kind: "site-check" } ? SiteCheckOutcome : RedirectTraceOutcome;

/**
 * How one vantage's part ended. `answered`: the vantage ran the job and sent
 * its outcome (a refusal by that vantage's own policy is an outcome of kind
 * `refused`; the operation names such an entry `refused`). `unavailable`: no
 * answer by the deadline, or no live instance of that vantage: never a word
 * about the target. `elapsedMs` is whole milliseconds from the call to the
 * entry.
 */
export type VantageEntry<O> =
  | { readonly vantage: VantageInfo; readonly state: "answered"; readonly outcome: O; readonly elapsedMs: number }
  | {
      readonly vantage: VantageInfo;
      readonly state: "unavailable";
      readonly reason: "no_live_instance" | "deadline" | "engine_error";
      readonly elapsedMs: number;
    };

export interface VantageFanout {
  /** The vantage this instance belongs to. */
  readonly self: VantageInfo;
  /** The vantages with a live instance now (their own heartbeats), sorted by name; always holds `self` while this instance serves. */
  alive(): Promise<readonly VantageInfo[]>;
  /** Every vantage seen within the retention window, live or not, sorted by name: what `all` asks. */
  known(): Promise<readonly KnownVantage[]>;
  /**
   * Sends `job` once to each of `vantages` (names, deduplicated by the
   * caller) and yields each vantage's entry as it arrives, exactly one per
   * vantage: at `deadline` (epoch milliseconds, sharedClockMs(): instances of every vantage keep their clocks by NTP) every vantage not yet in
   * is yielded `unavailable`. When `signal` aborts, the iteration ends without
   * further entries and the jobs still out are withdrawn where the engine can.
   */
  run<J extends VantageJob>(
    job: J,
    vantages: readonly string[],
    deadline: number,
    signal: AbortWatch | undefined,
  ): AsyncIterable<VantageEntry<VantageOutcomeOf<J>>>;
  /** Stops taking jobs, lets the ones in hand finish, and releases its connections. */
  close(): Promise<void>;
}
