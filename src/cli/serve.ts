import { readFileSync } from "node:fs";
import { ensureFirstKey } from "../access/first-key.js";
import { openStore } from "../access/open-store.js";
import type { AccessStore } from "../access/store.js";
import type { Config } from "../config.js";
import { createLogger } from "../observability/logger.js";
import { createMetrics } from "../observability/metrics.js";
import { diagnosticEnvFromConfig } from "../server/diagnostic-env-from-config.js";
import { type RunningService, startService } from "../server/start-service.js";
import { VERSION } from "../version.js";
import { type Command, type CommandIo, EXIT_FAILED, EXIT_OK, EXIT_USAGE } from "./command.js";

const HELP = `usage: sitediag serve

Serves the API on HOST:PORT (default 0.0.0.0:8080): the REST GET endpoints,
Connect, gRPC (h2c) and gRPC-Web, reflection, health (/healthz, /readyz),
/openapi.json and /metrics (or /metrics on SITEDIAG_METRICS_PORT when set).
Logs one JSON line per request on stdout (LOG_LEVEL; readable when stdout is
a terminal). Configuration comes from environment variables (see README).
SIGTERM or SIGINT stops it gracefully; a second signal stops it at once.
`;

/** `sitediag serve`: the service, until a stop signal. */
export const serveCommand: Command = {
  name: "serve",
  summary: "run the API: REST, Connect, gRPC and gRPC-Web on one port (HOST, PORT)",
  run: async (argv, io) => {
    if (argv.length > 0) {
      const asked = argv[0] === "--help" || argv[0] === "-h";
      (asked ? io.stdout : io.stderr).write(asked ? HELP : `sitediag serve: unexpected argument "${argv[0]}"\n${HELP}`);
      return asked ? EXIT_OK : EXIT_USAGE;
    }
    const ca = readCaFile(io.config, io);
    if (ca === false) return EXIT_USAGE;

    let store: AccessStore;
    try {
      store = await openStore(io.config.store);
    } catch (error) {
      io.stderr.write(`sitediag: cannot open the store named by SITEDIAG_STORE: ${messageOf(error)}\n`);
      return EXIT_FAILED;
    }
    const env = diagnosticEnvFromConfig(io.config, ca);
    const logger = await createLogger({ level: io.config.logLevel, destination: io.stdout, pretty: io.stdout.isTTY === true });
    let server: RunningService;
    try {
      server = await startService({ config: io.config, store, env, logger, metrics: createMetrics({ processMetrics: true }) });
    } catch (error) {
      io.stderr.write(`sitediag: cannot listen on ${io.config.host}:${io.config.port}: ${messageOf(error)}\n`);
      await Promise.all([env.prober.close(), store.close()]);
      return EXIT_FAILED;
    }
    io.stdout.write(`sitediag ${VERSION} listening on ${server.url} (REST, Connect, gRPC, gRPC-Web; store: ${store.kind})\n`);
    if (server.metricsUrl !== undefined) io.stdout.write(`sitediag metrics on ${server.metricsUrl}/metrics\n`);
    logger.info({ url: server.url, metricsUrl: server.metricsUrl ?? null, store: store.kind, version: VERSION }, "listening");
    await ensureFirstKey(store, io.stdout, server.url).catch((error: unknown) => {
      io.stderr.write(`sitediag: could not create a first API key: ${messageOf(error)}\n`);
    });
    return untilStopped(io, async () => {
      await server.close();
      await Promise.all([env.prober.close(), store.close()]);
    });
  },
};

/**
 * Resolves with the exit code once a stop signal has been handled: the first
 * closes gracefully (open requests finish), a second gives up at once.
 */
function untilStopped(io: CommandIo, close: () => Promise<void>): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    const unsubscribe = io.onStopSignal((signal) => {
      if (stopping) {
        io.stderr.write(`sitediag: ${signal} again, stopping now\n`);
        unsubscribe();
        resolve(EXIT_FAILED);
        return;
      }
      stopping = true;
      io.stderr.write(`sitediag: ${signal} received, finishing open requests\n`);
      close().then(
        () => {
          unsubscribe();
          io.stderr.write("sitediag: stopped\n");
          resolve(EXIT_OK);
        },
        (error: unknown) => {
          unsubscribe();
          io.stderr.write(`sitediag: error while stopping: ${messageOf(error)}\n`);
          resolve(EXIT_FAILED);
        },
      );
    });
  });
}

/** The PEM text of SITEDIAG_CA_FILE, undefined when unset, false (reported) when unreadable. */
function readCaFile(config: Config, io: CommandIo): string | undefined | false {
  if (config.caFile === undefined) return undefined;
  try {
    return readFileSync(config.caFile, "utf8");
  } catch (error) {
    io.stderr.write(`sitediag: configuration error in SITEDIAG_CA_FILE: cannot read ${config.caFile}: ${messageOf(error)}\n`);
    return false;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
