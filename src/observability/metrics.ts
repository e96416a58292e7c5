import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * Every metric the service exports, on its own registry so that several
 * servers can live in one process (tests) without sharing counts. No label
 * ever holds a URL, a host, an API key or a key id: label values come from
 * small closed sets (doors, method names, Connect codes, enum names, stages),
 * so a caller cannot create series at will either.
 */
export interface Metrics {
  readonly registry: Registry;
  /** DiagnosticsService calls by door, operation and Connect code ("ok", "resource_exhausted", ...). */
  readonly requests: Counter<"door" | "operation" | "code">;
  /** Time the diagnostic itself ran (after authentication and charging), by operation. */
  readonly diagnosticDuration: Histogram<"operation">;
  /** Completed site checks by status and failed stage ("none" for up). */
  readonly siteCheckResults: Counter<"status" | "failed_stage">;
  /** Completed redirect traces by chain status. */
  readonly redirectTraceResults: Counter<"chain_status">;
  /** Outbound requests (hops) by outcome (response, failure, timeout, refused) and stage. */
  readonly outboundHops: Counter<"outcome" | "stage">;
  /** Charge attempts by decision: admitted, rejected (a 429), unauthenticated. */
  readonly creditCharges: Counter<"decision">;
  /** Credits charged by admitted calls. */
  readonly creditsCharged: Counter;
  /** Latency of access-store calls by store kind, operation and outcome (ok, error). */
  readonly storeDuration: Histogram<"store" | "operation" | "outcome">;
  /** Diagnostic calls holding an in-flight slot now. */
  readonly inflight: Gauge;
  /** Calls turned away because every in-flight slot was taken (503), by operation. */
  readonly inflightRejections: Counter<"operation">;
  /** Each probe thread's event-loop delay over its last report window (p50, p99, max), in seconds. */
  readonly probeLoopDelay: Gauge<"thread" | "stat">;
  /** Checks waiting for the probe threads' loops to catch up. */
  readonly probeQueueWaiting: Gauge;
  /** Checks turned away (503) while the probe threads were saturated: the queue was full, or they waited too long. */
  readonly probeQueueRejections: Counter<"operation" | "why">;
  /** Probe threads that died (each is replaced, after a backoff when they keep dying). */
  readonly probeThreadDeaths: Counter;
  /** Probe threads booted and running now; 0 means /readyz answers 503 and new checks are refused. */
  readonly probeThreadsLive: Gauge;
  /** Diagnostics answered 503 because our own capacity kept them from a verdict (not charged), by operation and why. */
  readonly overloadAnswers: Counter<"operation" | "why">;
  /** The exposition, in Prometheus text format. */
  exposition(): Promise<string>;
  /** The Content-Type of the exposition. */
  readonly contentType: string;
}

export interface MetricsOptions {
  /**
   * Adds prom-client's process and Node.js metrics (CPU, memory, event loop
   * lag, GC, handles). On for the service; they install process-wide
   * observers that live as long as the process, so tests that start many
   * servers leave them off.
   */
  readonly processMetrics?: boolean;
}

// A diagnostic runs from milliseconds to the 30 s trace budget.
const DIAGNOSTIC_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60];
// A store call is sub-millisecond on SQLite and a round trip on Redis; a second is an outage.
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  if (options.processMetrics === true) collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({
      name: "sitediag_requests_total",
      help: "DiagnosticsService calls, by door (rest, connect, grpc, grpc-web), operation and outcome code.",
      labelNames: ["door", "operation", "code"] as const,
      registers,
    }),
    diagnosticDuration: new Histogram({
      name: "sitediag_diagnostic_duration_seconds",
      help: "Time a diagnostic ran, after authentication and charging, by operation.",
      labelNames: ["operation"] as const,
      buckets: DIAGNOSTIC_BUCKETS,
      registers,
    }),
    siteCheckResults: new Counter({
      name: "sitediag_site_check_results_total",
      help: "Completed site checks, by status (up, down) and failed stage (dns, connect, tls, http, none).",
      labelNames: ["status", "failed_stage"] as const,
      registers,
    }),
    redirectTraceResults: new Counter({
      name: "sitediag_redirect_trace_results_total",
      help: "Completed redirect traces, by chain status.",
      labelNames: ["chain_status"] as const,
      registers,
    }),
    outboundHops: new Counter({
      name: "sitediag_outbound_hops_total",
      help: "Outbound requests to targets, by outcome (response, failure, timeout, refused; overloaded: our own capacity failed it, no verdict) and stage (dns, connect, tls, http, none).",
      labelNames: ["outcome", "stage"] as const,
      registers,
    }),
    creditCharges: new Counter({
      name: "sitediag_credit_charges_total",
      help: "Credit charge attempts, by decision (admitted; rejected, answered 429; unauthenticated, answered 401).",
      labelNames: ["decision"] as const,
      registers,
    }),
    creditsCharged: new Counter({
      name: "sitediag_credits_charged_total",
      help: "Credits charged by admitted calls.",
      registers,
    }),
    storeDuration: new Histogram({
      name: "sitediag_store_operation_duration_seconds",
      help: "Latency of access-store calls, by store (sqlite, redis), operation and outcome (ok, error).",
      labelNames: ["store", "operation", "outcome"] as const,
      buckets: STORE_BUCKETS,
      registers,
    }),
    inflight: new Gauge({
      name: "sitediag_inflight_checks",
      help: "Diagnostic calls holding an in-flight slot now (SITEDIAG_MAX_INFLIGHT caps it).",
      registers,
    }),
    inflightRejections: new Counter({
      name: "sitediag_inflight_rejections_total",
      help: "Calls answered 503 unavailable because SITEDIAG_MAX_INFLIGHT calls were already in flight, by operation.",
      labelNames: ["operation"] as const,
      registers,
    }),
    probeLoopDelay: new Gauge({
      name: "sitediag_probe_loop_delay_seconds",
      help: "Event-loop delay of each probe thread over its last report window (0.1 s), by thread and stat (p50, p99, max): how late the thread may read a timestamp.",
      labelNames: ["thread", "stat"] as const,
      // Several serve processes each have a thread 0: the instance shows the worst.
      aggregator: "max",
      registers,
    }),
    probeQueueWaiting: new Gauge({
      name: "sitediag_probe_queue_waiting",
      help: "Checks waiting for the probe threads' loops to be under SITEDIAG_PROBE_MAX_LOOP_DELAY_MS again.",
      registers,
    }),
    probeQueueRejections: new Counter({
      name: "sitediag_probe_queue_rejections_total",
      help: "Checks answered 503 unavailable before any charge while the probe threads could not take them, by operation and why (full: SITEDIAG_PROBE_QUEUE already waiting; waited: too long in the queue; no_thread: no probe thread running).",
      labelNames: ["operation", "why"] as const,
      registers,
    }),
    probeThreadDeaths: new Counter({
      name: "sitediag_probe_thread_deaths_total",
      help: "Probe threads that died; each is replaced (at once, then after a growing delay while they keep dying).",
      registers,
    }),
    probeThreadsLive: new Gauge({
      name: "sitediag_probe_threads_live",
      help: "Probe threads booted and running now; at 0 /readyz answers 503 and checks are refused with 503.",
      registers,
    }),
    overloadAnswers: new Counter({
      name: "sitediag_overload_answers_total",
      help: "Diagnostics answered 503 unavailable, not charged, because our own capacity kept them from a verdict, by operation and why (late_start: waited too long to start; thread_lost: its probe thread died; no_thread: none running; overrun: a trace's own work between its requests ran past its budget).",
      labelNames: ["operation", "why"] as const,
      registers,
    }),
    exposition: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
