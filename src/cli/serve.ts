import cluster from "node:cluster";
import { ensureFirstKey } from "../access/issue-key.js";
import { storeHint } from "../access/store-hint.js";
import type { AccessStore } from "../access/store.js";
import { createLogger, type Logger } from "../observability/logger.js";
import { createMetrics, type Metrics } from "../observability/metrics.js";
import { clusterWideMetrics } from "../server/ops/cluster-metrics.js";
import { builtPageDir } from "../server/ops/page.js";
import { announceListening, onWorkerStopRequest } from "../server/ops/cluster-messages.js";
import { diagnosticRunnerFromConfig } from "../runner/runner-from-config.js";
import { redisFanoutFromConfig } from "../vantage/fanout-from-config.js";
import { type RunningService, startService } from "../server/start-service.js";
import { VERSION } from "../package-info.js";
import {
  type Command,
  type CommandIo,
  EXIT_FAILED,
  EXIT_OK,
  EXIT_USAGE,
  messageOf,
  openConfiguredStore,
  readConfiguredCa,
  selfCommand,
} from "./command.js";
import { serveCluster } from "./serve-cluster.js";
import { COMMAND_NAMES } from "./command-names.js";

const HELP = `usage: sitediag serve

Serves the API on HOST:PORT (default 0.0.0.0:8080): the REST GET endpoints,
Connect, gRPC (h2c) and gRPC-Web, reflection, health (/healthz, /readyz),
/openapi.json and /metrics (or /metrics on SITEDIAG_METRICS_PORT when set),
and the page for people at / (built by npm run build into dist/web).
Logs one JSON line per request on stdout (LOG_LEVEL; readable when stdout is
a terminal). Configuration comes from environment variables (see README).
SIGTERM or SIGINT stops it gracefully; a second signal stops it at once.
SITEDIAG_WORKERS=N (or auto) runs N worker processes on the one port.
`;

/** `sitediag serve`: the service, until a stop signal. */
export const serveCommand: Command = {
  name: COMMAND_NAMES.serve.name,
  summary: COMMAND_NAMES.serve.summary,
  run: async (argv, io) => {
    if (argv.length > 0) {
      const asked = argv[0] === "--help" || argv[0] === "-h";
      (asked ? io.stdout : io.stderr).write(asked ? HELP : `sitediag serve: unexpected argument "${argv[0]}"\n${HELP}`);
      return asked ? EXIT_OK : EXIT_USAGE;
    }
    const ca = readConfiguredCa(io, "sitediag: ");
    if (ca === false) return EXIT_USAGE;
    if (io.config.workers > 1 && cluster.isPrimary) return serveCluster(io);
    return serveHere(io, ca, io.config.workers > 1 ? workerRole() : SINGLE_PROCESS);
  },
};

/**
 * What differs between `sitediag serve` alone and one worker of a cluster
 * (SITEDIAG_WORKERS > 1): how metrics are read, what the log lines carry,
 * who announces the service, and what stops it.
 */
interface ServeRole {
  readonly metrics: (own: Metrics) => Metrics;
  readonly logger: (base: Logger) => Logger;
  announce(io: CommandIo, server: RunningService, store: AccessStore): Promise<void>;
  readonly onStopSignal: CommandIo["onStopSignal"] | undefined;
  /** How this process names itself in stop messages on stderr. */
  readonly name: string;
}

const SINGLE_PROCESS: ServeRole = {
  metrics: (own) => own,
  logger: (base) => base,
  announce: async (io, server, store) => {
    io.stdout.write(`sitediag ${VERSION} listening on ${server.url} (REST, Connect, gRPC, gRPC-Web; store: ${store.kind})\n`);
    if (server.metricsUrl !== undefined) io.stdout.write(`sitediag metrics on ${server.metricsUrl}/metrics\n`);
    await ensureFirstKey(store, io.stderr, server.url, selfCommand(), storeHint(io.config.store)).catch((error: unknown) => {
      io.stderr.write(`sitediag: could not create a first API key: ${messageOf(error)}\n`);
    });
  },
  onStopSignal: undefined,
  name: "sitediag",
};

/** The primary announces the service and makes the first key; a worker tells it that it listens. */
function workerRole(): ServeRole {
  return {
    metrics: clusterWideMetrics,
    logger: (base) => base.child({ worker: cluster.worker?.id ?? null, pid: process.pid }),
    announce: async (_io, server, store) =>
      announceListening({ url: server.url, metricsUrl: server.metricsUrl ?? null, store: store.kind }),
    onStopSignal: onWorkerStopRequest,
    name: `sitediag worker ${process.pid}`,
  };
}

/** The service in this process, until a stop signal. */
async function serveHere(io: CommandIo, ca: string | undefined, role: ServeRole): Promise<number> {
  const store = await openConfiguredStore(io);
  if (store === undefined) return EXIT_FAILED;
  const logger = role.logger(await createLogger({ level: io.config.logLevel, destination: io.stdout, pretty: io.stdout.isTTY === true }));
  const runner = diagnosticRunnerFromConfig(io.config, ca, {
    // Once per death: the checks it held were answered 503 (retryable, not charged); the log says why, and when it comes back.
    onProbeDefect: (defect) =>
      logger.error(
        { host: defect.host, stage: defect.stage, err: defect.error },
        "internal probe error: the hop failed on an error of our own",
      ),
    onProbeThreadExit: (exit) =>
      logger.error(
        { probeThread: exit.thread, reason: exit.reason, inFlightLost: exit.lost, replaced: exit.replaced, restartInMs: exit.restartInMs },
        "probe thread stopped",
      ),
  });
  // Listening before the probe threads have booted would count their boot against the first checks' deadlines.
  await runner.ready();
  const pageDir = builtPageDir();
  // Running from the sources without a build (tsx) is fine for the API; only the page is missing then.
  if (pageDir === undefined) logger.info("the page is not built (npm run build writes dist/web): / answers 404");
  const metrics = role.metrics(createMetrics({ processMetrics: true }));
  // On a Redis store this instance is a worker of its vantage (docs/vantages.md).
  const fanout = await redisFanoutFromConfig(io.config, runner, metrics.registry, (error, where) =>
    logger.warn({ err: error, where }, "vantage engine trouble"),
  ).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
  if (fanout instanceof Error) {
    io.stderr.write(`sitediag: ${messageOf(fanout)}\n`);
    await Promise.all([runner.close(), store.close()]);
    return EXIT_FAILED;
  }
  let server: RunningService;
  try {
    // Without a Redis store a call naming vantages runs here alone, as vantage `local` (startService's default).
    server = await startService({
      config: io.config,
      store,
      runner,
      logger,
      pageDir,
      metrics,
      ...(fanout === undefined ? {} : { fanout, vantageReady: fanout.ready }),
    });
  } catch (error) {
    io.stderr.write(`sitediag: cannot listen on ${io.config.host}:${io.config.port}: ${messageOf(error)}\n`);
    await Promise.all([fanout?.close(), runner.close(), store.close()]);
    return EXIT_FAILED;
  }
  logger.info({ url: server.url, metricsUrl: server.metricsUrl ?? null, store: store.kind, version: VERSION }, "listening");
  await role.announce(io, server, store);
  return untilStopped(io, role, async () => {
    await server.close();
    // The jobs in hand finish on the runner before it closes.
    await fanout?.close();
    await Promise.all([runner.close(), store.close()]);
  });
}

/**
 * Resolves with the exit code once a stop signal has been handled: the first
 * closes gracefully (open requests finish), a second gives up at once.
 */
function untilStopped(io: CommandIo, role: ServeRole, close: () => Promise<void>): Promise<number> {
  const name = role.name;
  return new Promise((resolve) => {
    let stopping = false;
    const unsubscribe = (role.onStopSignal ?? io.onStopSignal)((signal) => {
      if (stopping) {
        io.stderr.write(`${name}: ${signal} again, stopping now\n`);
        unsubscribe();
        resolve(EXIT_FAILED);
        return;
      }
      stopping = true;
      // Begun before the line is written: close() stops accepting before it returns, and a reader may connect the moment it reads the line.
      const closed = close();
      io.stderr.write(`${name}: ${signal} received, finishing open requests\n`);
      closed.then(
        () => {
          unsubscribe();
          io.stderr.write(`${name}: stopped\n`);
          resolve(EXIT_OK);
        },
        (error: unknown) => {
          unsubscribe();
          io.stderr.write(`${name}: error while stopping: ${messageOf(error)}\n`);
          resolve(EXIT_FAILED);
        },
      );
    });
  });
}
