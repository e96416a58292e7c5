import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { issueKey } from "../../src/access/issue-key.js";
import { openSqliteStore } from "../../src/access/sqlite-store.js";
import type { AccessStore } from "../../src/access/store.js";
import { type Config, loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/observability/logger.js";
import { createMetrics, type Metrics } from "../../src/observability/metrics.js";
import type { DiagnosticRunner } from "../../src/runner/diagnostic-runner.js";
import { diagnosticRunnerFromConfig } from "../../src/runner/runner-from-config.js";
import type { ServerLimits } from "../../src/server/start-server.js";
import { startService } from "../../src/server/start-service.js";

export interface ObservedService {
  readonly url: string;
  readonly metricsUrl: string | undefined;
  /** A valid key with the full budget, and its public id. */
  readonly key: string;
  readonly keyId: string;
  readonly config: Config;
  readonly metrics: Metrics;
  readonly store: AccessStore;
  /** Where the service runs its diagnostics (on probe threads when config.probeThreads > 0). */
  readonly runner: DiagnosticRunner;
  /** Every log line written so far, parsed. */
  logLines(): Record<string, unknown>[];
  /** Every log line written so far, as written. */
  logText(): string;
  close(): Promise<void>;
}

/**
 * The service exactly as `sitediag serve` composes it (startService), on
 * loopback port 0 with a SQLite store in a temp dir, a key already issued,
 * and its JSON log captured through pino's destination stream.
 */
export async function startObservedService(
  options: {
    readonly config?: Partial<Config>;
    readonly limits?: Partial<ServerLimits>;
    readonly processMetrics?: boolean;
    /** Around the runner built from the config, e.g. to give it a load to report. */
    readonly wrapRunner?: (runner: DiagnosticRunner) => DiagnosticRunner;
    /** What the service sees of its store, e.g. the same store with slower lookups; the test's `store` is the real one. */
    readonly wrapStore?: (store: AccessStore) => AccessStore;
    /** Instead of the runner built from the config, e.g. on probe threads started from a test entry. */
    readonly runner?: (config: Config) => DiagnosticRunner;
  } = {},
): Promise<ObservedService> {
  const dir = mkdtempSync(join(tmpdir(), "sitediag-observed-"));
  const config: Config = {
    ...loadConfig({}),
    host: "127.0.0.1",
    port: 0,
    allowCidrs: ["127.0.0.0/8", "::1/128"],
    // In-process unless a test asks for probe threads.
    probeThreads: 0,
    logLevel: "debug",
    ...options.config,
  };
  const store = openSqliteStore(join(dir, "keys.db"));
  const issued = await issueKey(store, "test");
  if (issued === undefined) throw new Error("no key issued");
  const written: string[] = [];
  const logger = await createLogger({ level: config.logLevel, destination: { write: (line: string) => void written.push(line) } });
  const metrics = createMetrics({ processMetrics: options.processMetrics ?? false });
  const built = options.runner === undefined ? diagnosticRunnerFromConfig(config, undefined) : options.runner(config);
  const runner = options.wrapRunner === undefined ? built : options.wrapRunner(built);
  // As `serve`: the probe threads boot before the port takes checks.
  await runner.ready();
  const service = await startService({ config, store: options.wrapStore?.(store) ?? store, runner, logger, metrics, shutdownGraceMs: 5_000, ...(options.limits ? { limits: options.limits } : {}) });
  return {
    url: service.url,
    metricsUrl: service.metricsUrl,
    key: issued.secret,
    keyId: issued.record.id,
    config,
    metrics,
    store,
    runner,
    logLines: () => written.join("").split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Record<string, unknown>),
    logText: () => written.join(""),
    close: async () => {
      await service.close();
      await runner.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
