import { createAccessInterceptor } from "../access/access-interceptor.js";
import { createKeyGate } from "../access/key-gate.js";
import type { AccessStore } from "../access/store.js";
import { USAGE_HEADER_NAMES } from "../access/usage-headers.js";
import type { Config } from "../config.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import { observeRequests } from "./observers/request-observer.js";
import { createCallObserver, createResultObserver } from "./observers/call-interceptors.js";
import { timedStore } from "./observers/timed-store.js";
import { createAdmission, createInflightLimit, type InflightObserver } from "./admission/admission.js";
import { createProbeQueue } from "./admission/probe-queue.js";
import type { DiagnosticRunner, HopTally } from "../runner/diagnostic-runner.js";
import type { ProbeLoad } from "../runner/probe-threads.js";
import { listenForMetrics, type MetricsListener } from "./ops/metrics-listener.js";
import { metricsRoute, openApiRoute } from "./ops/plain-routes.js";
import { creditsRoute } from "./ops/credits-route.js";
import { loadPageFiles, pageRoutes } from "./ops/page.js";
import { type ServerLimits, startServer } from "./start-server.js";
import type { VantageFanout } from "../vantage/vantage-fanout.js";
import { createLocalFanout, LOCAL_VANTAGE } from "../vantage/local-fanout.js";
import { createVantagePlanner } from "../service/vantage-plan.js";
import { type VantageDeadlines, vantageDeadlinesFor } from "../service/vantage-run.js";

export interface ServiceDeps {
  /** HOST, PORT, SITEDIAG_MAX_INFLIGHT, SITEDIAG_METRICS_PORT and the credit policy are read from it. */
  readonly config: Config;
  /** The access store as opened; it is timed here, and closed by whoever opened it. */
  readonly store: AccessStore;
  /** Where the diagnostics run; its hops are counted here, and it is closed by whoever made it. */
  readonly runner: DiagnosticRunner;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Default 30 s, the longest diagnostic. */
  readonly shutdownGraceMs?: number;
  readonly limits?: Partial<ServerLimits>;
  /** The built page (`npm run build` writes dist/web), served at `/`; none when undefined. */
  readonly pageDir?: string | undefined;
  /** Where a call naming vantages goes; default (the embedded SQLite store): this process alone, vantage `local`, on `runner`. Closed by whoever made it. */
  readonly fanout?: VantageFanout;
  /** How long such a call waits for its vantages; default vantageDeadlinesFor(config), the configured timeouts'. */
  readonly vantageDeadlines?: VantageDeadlines;
  /** Whether this instance's vantage stream answers (a Redis store's vantage engine): not ready while it does not. */
  readonly vantageReady?: (() => Promise<boolean>) | undefined;
}

export interface RunningService {
  /** Base URL of the API port. */
  readonly url: string;
  readonly port: number;
  /** Base URL of the separate metrics port, when SITEDIAG_METRICS_PORT is set. */
  readonly metricsUrl: string | undefined;
  /** Graceful stop of both ports: open calls finish within the grace period. */
  close(): Promise<void>;
}

/**
 * The whole service as `sitediag serve` runs it: the server frame with, on
 * every door, admission from the headers (the in-flight cap, then the key,
 * before any body is read), then in this order the call observer (logs,
 * request metrics), the access interceptor (key and credits) and the
 * result observer (diagnostic time and results); plus
 * GET /openapi.json, GET /metrics (here or on its own port) and the page at
 * GET / when it was built.
 */
export async function startService(deps: ServiceDeps): Promise<RunningService> {
  const { config, logger, metrics } = deps;
  const store = timedStore(deps.store, metrics);
  const { runner } = deps;
  const fanout = deps.fanout ?? createLocalFanout({ info: LOCAL_VANTAGE, runner });
  const stopHopCount = countOutboundHops(runner, metrics);
  const load = runner.load;
  const stopLoopMetrics = load === undefined ? () => undefined : exportLoopDelay(load, metrics);
  const stopThreadMetrics = load === undefined ? () => undefined : exportThreadLife(load, metrics);
  const probeQueue = createProbeQueue({
    load,
    max: config.probeQueue,
    maxWaitMs: PROBE_QUEUE_MAX_WAIT_MS,
    observer: {
      waiting: (count) => metrics.probeQueueWaiting.set(count),
      rejected: (operation, why) => metrics.probeQueueRejections.inc({ operation, why }),
    },
  });
  const admission = createAdmission(
    createInflightLimit({ max: config.maxInflight, observer: inflightMetrics(metrics) }),
    createKeyGate(store),
    probeQueue,
  );
  const separateMetrics = config.metricsPort !== undefined;
  const onDefect = (error: unknown) => logger.error({ err: error }, "server defect");

  const server = await startServer({
    config,
    runner,
    vantages: { fanout, deadlines: deps.vantageDeadlines ?? vantageDeadlinesFor(config) },
    admission,
    // The vantages a call names are resolved (`all`) before the charge, which is per vantage.
    interceptors: [
      createCallObserver(),
      createVantagePlanner(fanout),
      createAccessInterceptor({ store, config }),
      createResultObserver(metrics),
    ],
    // Not ready while no probe thread runs: every check would be refused until a replacement boots.
    ready: () =>
      load !== undefined && load.liveThreads() === 0 ? Promise.resolve(false) : store.ping().then(() => deps.vantageReady?.() ?? true),
    exposeHeaders: USAGE_HEADER_NAMES,
    plainRoutes: [
      openApiRoute(),
      // What a key has left, read for free (the page weighs a batch against it before sending it).
      creditsRoute(store, { budget: config.creditBudget, windowSeconds: config.creditWindowSeconds }, onDefect),
      ...(separateMetrics ? [] : [metricsRoute(metrics)]),
      ...(deps.pageDir === undefined ? [] : pageRoutes(loadPageFiles(deps.pageDir))),
    ],
    wrapHandler: (door, routes) => observeRequests(door, routes, { logger, metrics }),
    onDefect,
    ...(deps.shutdownGraceMs === undefined ? {} : { shutdownGraceMs: deps.shutdownGraceMs }),
    limits: Object.assign({}, config.intake, deps.limits),
  });
  let metricsListener: MetricsListener | undefined;
  if (config.metricsPort !== undefined) {
    try {
      metricsListener = await listenForMetrics({ host: config.host, port: config.metricsPort, metrics, onDefect });
    } catch (error) {
      await server.close();
      throw new Error(
        `cannot listen for metrics on ${config.host}:${config.metricsPort}: ${error instanceof Error ? error.message : String(error)}`,
        {
          cause: error,
        },
      );
    }
  }
  return {
    url: server.url,
    port: server.port,
    metricsUrl: metricsListener?.url,
    close: async () => {
      // Metrics stay scrapeable while the last calls drain.
      await server.close();
      await metricsListener?.close();
      stopLoopMetrics();
      stopThreadMetrics();
      stopHopCount();
    },
  };
}

/** A check waits at most this long for the probe threads before it is refused; most calls would rather retry elsewhere. */
const PROBE_QUEUE_MAX_WAIT_MS = 5_000;

/** Each probe thread's loop delay, as it reports it, on the service's own registry. */
function exportLoopDelay(load: ProbeLoad, metrics: Pick<Metrics, "probeLoopDelay">): () => void {
  return load.onReport(() => {
    for (const report of load.loopDelays()) {
      const thread = String(report.thread);
      metrics.probeLoopDelay.set({ thread, stat: "p50" }, report.p50Ms / 1_000);
      metrics.probeLoopDelay.set({ thread, stat: "p99" }, report.p99Ms / 1_000);
      metrics.probeLoopDelay.set({ thread, stat: "max" }, report.maxMs / 1_000);
    }
  });
}

/** Deaths of probe threads, and how many run now (read on each death and each loop-delay report, which only live threads send). */
function exportThreadLife(load: ProbeLoad, metrics: Pick<Metrics, "probeThreadDeaths" | "probeThreadsLive">): () => void {
  const live = () => metrics.probeThreadsLive.set(load.liveThreads());
  live();
  const stopReports = load.onReport(live);
  const stopExits = load.onThreadExit(() => {
    metrics.probeThreadDeaths.inc();
    live();
  });
  return () => {
    stopReports();
    stopExits();
  };
}

function inflightMetrics(metrics: Pick<Metrics, "inflight" | "inflightRejections">): InflightObserver {
  return {
    admitted: (slots) => metrics.inflight.inc(slots),
    released: (slots) => metrics.inflight.dec(slots),
    rejected: (operation) => metrics.inflightRejections.inc({ operation }),
  };
}

/** Every hop the runner's diagnostics make, wherever they run, counted by outcome as each diagnostic ends (sitediag_outbound_hops_total); returns the unsubscribe. */
function countOutboundHops(runner: Pick<DiagnosticRunner, "onHops">, metrics: Pick<Metrics, "outboundHops">): () => void {
  return runner.onHops((hops) => {
    for (const hop of hops) metrics.outboundHops.inc(hopLabels(hop));
  });
}

function hopLabels(outcome: HopTally): { outcome: string; stage: string } {
  switch (outcome.kind) {
    case "response":
      return { outcome: "response", stage: "none" };
    case "failure":
      return { outcome: outcome.failure.timedOut ? "timeout" : "failure", stage: outcome.failure.stage };
    case "refused":
      return { outcome: "refused", stage: "none" };
    case "overloaded":
      return { outcome: "overloaded", stage: "none" };
  }
}
