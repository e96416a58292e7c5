import cluster, { type Worker } from "node:cluster";
import { ensureFirstKey } from "../access/issue-key.js";
import { storeHint } from "../access/store-hint.js";
import { isWorkerMessage, type ListeningMessage, type StopMessage } from "../server/ops/cluster-messages.js";
import { createMetricsAnswerer } from "../server/ops/cluster-metrics.js";
import { VERSION } from "../package-info.js";
import { type CommandIo, EXIT_FAILED, EXIT_OK, messageOf, openConfiguredStore, selfCommand } from "./command.js";

/** A worker that dies gets a successor after this delay, doubled for each recent death, up to the cap. */
const RESTART_BASE_MS = 250;
const RESTART_MAX_MS = 10_000;
/** Deaths older than this no longer lengthen the delay. */
const RESTART_MEMORY_MS = 60_000;

/**
 * The primary of `sitediag serve` with SITEDIAG_WORKERS > 1. It serves no
 * call itself: it forks the workers (each runs the normal serve path; the
 * listening socket is created here and shared by node:cluster), announces the
 * service once all listen, makes the store's first key, answers workers'
 * metrics requests with the sum over all workers, replaces a worker that dies,
 * and turns stop signals into graceful worker stops (a second: kills them).
 */
export async function serveCluster(io: CommandIo): Promise<number> {
  const count = io.config.workers;
  // Opened here first so a bad SITEDIAG_STORE is reported once, not by every worker.
  const store = await openConfiguredStore(io);
  if (store === undefined) return EXIT_FAILED;

  let storeClosed: Promise<void> | undefined;
  const closeStore = () => (storeClosed ??= store.close());

  return new Promise<number>((resolve) => {
    const answerMetrics = createMetricsAnswerer();
    /** Live workers by cluster id, with the pid of the worker each one replaces. */
    const live = new Map<number, { readonly worker: Worker; listening: boolean; readonly replaces: number | undefined }>();
    const restartTimers = new Set<NodeJS.Timeout>();
    const deaths: number[] = [];
    let phase: "starting" | "serving" | "stopping" | "done" = "starting";
    /** A worker could not start, or one that served exited badly while stopping. */
    let failed = false;

    const fork = (replaces?: number) => {
      const worker = cluster.fork();
      live.set(worker.id, { worker, listening: false, replaces });
    };

    const onMessage = (worker: Worker, message: unknown) => {
      if (!isWorkerMessage(message)) return;
      if (message.type === "sitediag:metrics-request") answerMetrics(worker, message);
      else onListening(worker, message);
    };

    const onListening = (worker: Worker, message: ListeningMessage) => {
      const entry = live.get(worker.id);
      if (entry === undefined) return;
      entry.listening = true;
      if (entry.replaces !== undefined) io.stderr.write(`sitediag: worker ${worker.process.pid} replaced worker ${entry.replaces}\n`);
      if (phase !== "starting" || [...live.values()].some((other) => !other.listening)) return;
      phase = "serving";
      void announce(message);
    };

    const announce = async (message: ListeningMessage) => {
      const pids = [...live.values()].map((entry) => entry.worker.process.pid).join(", ");
      io.stdout.write(
        `sitediag ${VERSION} listening on ${message.url} (REST, Connect, gRPC, gRPC-Web; store: ${message.store}; ${count} workers: ${pids})\n`,
      );
      if (message.metricsUrl !== null) io.stdout.write(`sitediag metrics on ${message.metricsUrl}/metrics (all workers)\n`);
      await ensureFirstKey(store, io.stderr, message.url, selfCommand(), storeHint(io.config.store)).catch((error: unknown) => {
        io.stderr.write(`sitediag: could not create a first API key: ${messageOf(error)}\n`);
      });
      // The workers have their own connections; the primary needs none while serving.
      await closeStore();
    };

    const onExit = (worker: Worker, code: number | null, signal: string | null) => {
      const entry = live.get(worker.id);
      if (entry === undefined) return;
      live.delete(worker.id);
      const pid = worker.process.pid ?? 0;
      const how = signal === null ? `exit code ${code ?? "unknown"}` : `signal ${signal}`;
      if (phase === "serving") {
        replace(pid, how);
        return;
      }
      if (phase === "starting") {
        failed = true;
        io.stderr.write(`sitediag: worker ${pid} failed to start (${how}); stopping the others\n`);
        stopWorkers();
      } else if (code !== 0 && entry.listening) {
        failed = true;
        io.stderr.write(`sitediag: worker ${pid} stopped badly (${how})\n`);
      }
      if (live.size === 0) finish(failed ? EXIT_FAILED : EXIT_OK);
    };

    const replace = (pid: number, how: string) => {
      const now = Date.now();
      deaths.push(now);
      while ((deaths[0] ?? now) < now - RESTART_MEMORY_MS) deaths.shift();
      const delayMs = Math.min(RESTART_BASE_MS * 2 ** (deaths.length - 1), RESTART_MAX_MS);
      io.stderr.write(`sitediag: worker ${pid} died (${how}); starting a replacement in ${delayMs} ms\n`);
      const timer = setTimeout(() => {
        restartTimers.delete(timer);
        if (phase === "serving") fork(pid);
      }, delayMs);
      restartTimers.add(timer);
    };

    /** Graceful: each worker stops accepting, finishes its calls in flight, closes its store and exits. */
    const stopWorkers = () => {
      phase = "stopping";
      for (const timer of restartTimers) clearTimeout(timer);
      restartTimers.clear();
      const stop: StopMessage = { type: "sitediag:stop" };
      for (const { worker, listening } of live.values()) {
        if (worker.isConnected()) worker.send(stop);
        // A worker still starting has not subscribed to stop messages; it has no calls either.
        if (!listening) worker.process.kill("SIGTERM");
      }
    };

    const unsubscribe = io.onStopSignal((signal) => {
      if (phase === "stopping" || phase === "done") {
        io.stderr.write(`sitediag: ${signal} again, stopping now\n`);
        for (const { worker } of live.values()) worker.process.kill("SIGKILL");
        finish(EXIT_FAILED);
        return;
      }
      io.stderr.write(`sitediag: ${signal} received, finishing open requests in ${live.size} workers\n`);
      stopWorkers();
      if (live.size === 0) finish(EXIT_OK);
    });

    const finish = (code: number) => {
      if (phase === "done") return;
      phase = "done";
      unsubscribe();
      cluster.off("message", onMessage);
      cluster.off("exit", onExit);
      void closeStore()
        .catch(() => undefined)
        .finally(() => {
          if (code === EXIT_OK) io.stderr.write("sitediag: stopped\n");
          resolve(code);
        });
    };

    cluster.on("message", onMessage);
    cluster.on("exit", onExit);
    for (let index = 0; index < count; index++) fork();
  });
}
