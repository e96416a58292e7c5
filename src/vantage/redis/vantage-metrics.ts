import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/**
 * The engine's metrics, per vantage. A `vantage` label holds a name some
 * instance announced (a live vantage), never a name a caller typed: a name
 * with no live instance is counted as `unknown`, so callers cannot create
 * series at will.
 */
export interface VantageMetrics {
  /** Jobs this instance took as a worker of its vantage, by how they ended: answered, late (past the deadline), malformed. */
  readonly jobs: Counter<"vantage" | "outcome">;
  /** Time a job ran on this worker. */
  readonly jobSeconds: Histogram<"vantage">;
  /** Time from sending a job to its answer, per vantage asked, on the dispatcher. */
  readonly entrySeconds: Histogram<"vantage">;
  /** Entries that came back `unavailable`, by vantage and reason (deadline, no_live_instance, engine_error). */
  readonly unavailable: Counter<"vantage" | "reason">;
  /** The vantage's jobs now: `waiting` in its stream, `taken` by a worker and not yet acknowledged. */
  readonly pending: Gauge<"vantage" | "state">;
}

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60];

export function createVantageMetrics(registry: Registry | undefined): VantageMetrics {
  const registers = registry === undefined ? [] : [registry];
  return {
    jobs: new Counter({
      name: "sitediag_vantage_jobs_total",
      help: "Vantage jobs this instance took as a worker, by its vantage and how they ended.",
      labelNames: ["vantage", "outcome"] as const,
      registers,
    }),
    jobSeconds: new Histogram({
      name: "sitediag_vantage_job_duration_seconds",
      help: "Time a vantage job ran on this worker.",
      labelNames: ["vantage"] as const,
      buckets: BUCKETS,
      registers,
    }),
    entrySeconds: new Histogram({
      name: "sitediag_vantage_entry_duration_seconds",
      help: "Time from sending a job to a vantage to its answer, on the asking instance.",
      labelNames: ["vantage"] as const,
      buckets: BUCKETS,
      registers,
    }),
    unavailable: new Counter({
      name: "sitediag_vantage_unavailable_total",
      help: "Vantage entries answered unavailable, by vantage and reason.",
      labelNames: ["vantage", "reason"] as const,
      registers,
    }),
    // Every worker process reads the same stream: across SITEDIAG_WORKERS the largest reading, not their sum.
    pending: new Gauge({
      name: "sitediag_vantage_jobs_pending",
      help: "The vantage's jobs: waiting in its stream, or taken and not yet acknowledged.",
      labelNames: ["vantage", "state"] as const,
      aggregator: "max",
      registers,
    }),
  };
}
