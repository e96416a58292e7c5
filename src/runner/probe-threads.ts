import type { Worker } from "node:worker_threads";
import type { AbortWatch } from "../probe/clock.js";
import type { ProberOptions } from "../probe/hop-types.js";
import type { Overload } from "../probe/overload.js";
import { type Batch, batchedSender, type FromProbeThread, type ProbeThreadData, type ToProbeThread } from "./thread-messages.js";
import { DIAGNOSTIC_THREAD_ENTRY, restartDelayMs, RESTART_BACKOFF, type RestartBackoff, threadStarter } from "./thread-start.js";

export interface ThreadingOptions {
  /** Probe threads (SITEDIAG_PROBE_THREADS), at least 1. */
  readonly threads: number;
  /** A probe loop delayed beyond this (the median of its last report window) is congested. */
  readonly maxLoopDelayMs: number;
  /** Told when a probe thread stops on its own (crash, killed) and what became of it; for the log. */
  readonly onThreadExit?: (event: ThreadExit) => void;
  /**
   * The thread's module: one that calls hostProbeThread (thread-host.ts), as
   * its compiled `.js` URL or its `.ts` source's (tests, tsx). The diagnostic
   * thread beside this one (DIAGNOSTIC_THREAD_ENTRY) when undefined; tests
   * give one whose jobs can also hold or kill the thread.
   */
  readonly entry?: URL;
  /** How a dead thread is replaced; RESTART_BACKOFF when undefined (tests shorten it). */
  readonly restart?: RestartBackoff;
}

export interface ThreadExit {
  readonly thread: number;
  readonly reason: string;
  /** Jobs (whole diagnostics) that were in flight on it, each answered as overload (retryable, never run again). */
  readonly lost: number;
  /** Always true: a dead thread is always replaced (kept for the log's field). */
  readonly replaced: boolean;
  /** How long until its replacement starts. */
  readonly restartInMs: number;
}

/**
 * What a job (`run`) rejects with when no thread could give it an answer:
 * the thread died with it in flight, or none was running. Retryable, and
 * never a verdict on the job's target; the job is not sent again.
 */
export class ProbeThreadUnavailable extends Error {
  constructor(readonly overload: Overload) {
    super(overload.detail);
    this.name = "ProbeThreadUnavailable";
  }
}

/**
 * What probe threads can say about their own load: the delay of their loops
 * is what would make a timestamp late.
 */
export interface ProbeLoad {
  /** Each probe thread's event-loop delay over its last report window. */
  loopDelays(): readonly LoopDelayReport[];
  /** True while every probe loop's median delay is beyond the limit: a diagnostic started now would be timed late. */
  congested(): boolean;
  /** Called after every report; returns the unsubscribe. */
  onReport(listener: () => void): () => void;
  /** Probe threads booted and running now; 0 while every one is dead or still booting (the service is not ready). */
  liveThreads(): number;
  /** Called each time a probe thread dies (the metric); returns the unsubscribe. */
  onThreadExit(listener: () => void): () => void;
}

/** One probe thread's event-loop delay over one report window (perf_hooks.monitorEventLoopDelay), in milliseconds. */
export interface LoopDelayReport {
  /** Which probe thread (0 .. threads - 1); a replacement keeps the number of the thread it replaces. */
  readonly thread: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Jobs (whole diagnostics) in flight on that thread when the report was read. */
  readonly inFlight: number;
}

/** Worker threads that each run a prober of their own and take whole jobs (a diagnostic) from this thread. */
export interface ProbeThreads {
  readonly load: ProbeLoad;
  /**
   * Runs one job, whole, on the thread with the fewest in flight, by the
   * entry's runner: `job` and the answer cross as plain data. `signal`
   * aborting cancels it there. Rejects with ProbeThreadUnavailable when its
   * thread died with it or none was running (it is not sent again),
   * otherwise only on a defect.
   */
  run(job: unknown, signal?: AbortWatch): Promise<unknown>;
  /** The live worker of each probe thread, in thread order (operations and tests). */
  workers(): readonly Worker[];
  /**
   * Resolves once every running thread has loaded and can start a job at
   * once. A job sent earlier waits for its thread, and that boot time (tens
   * of milliseconds compiled; seconds from TypeScript source on a loaded
   * machine) would count against a caller's own deadline: `serve` waits for
   * this before it listens, and the tests before each test.
   */
  ready(): Promise<void>;
  /** Graceful: the jobs in flight finish (each ends within its own timeouts), then the threads stop. */
  close(): Promise<void>;
}

/** Loop delay reports per second from each thread: often enough to react within a tenth of a second. */
const REPORT_EVERY_MS = 100;
interface Pending {
  resolve(answer: unknown): void;
  /** A defect, or ProbeThreadUnavailable when no thread can answer it. */
  reject(error: Error): void;
  readonly signal: AbortWatch | undefined;
  readonly onAbort: (() => void) | undefined;
}

interface Slot {
  readonly index: number;
  worker: Worker | null;
  /** Sends to the current worker, batched per turn of this loop. */
  send: (message: ToProbeThread) => void;
  readonly pending: Map<number, Pending>;
  delay: LoopDelayReport | null;
  /** Deaths in a row, each within healthyAfterMs of its boot: the backoff's exponent. */
  deaths: number;
  /** When the current worker said it is ready (performance.now()); null while it boots or none runs. */
  liveSince: number | null;
  /** Settles when the current worker has said it is ready (or has exited). */
  booted: Promise<void>;
  /** A replacement waiting out its backoff: its timer, and what starts it at once (close ends the wait so). */
  restart: { readonly timer: NodeJS.Timeout; readonly now: () => void } | null;
}

/**
 * `threads` worker threads, each a loop that does nothing but probe, with a
 * prober of its own built from `options`: it owns the sockets, timers and
 * resolvers, and takes every timestamp, so the main thread's work (callers'
 * HTTP, access, rendering) never makes a measurement late. A job (`run`: under
 * `serve`, one whole diagnostic) goes to the thread with the fewest in
 * flight. A thread that dies ends its jobs in flight as overload (never
 * silently, never sent again, never a verdict on a target) and is always
 * replaced, after a backoff when it keeps dying.
 */
export function createProbeThreads(options: ProberOptions, threading: ThreadingOptions): ProbeThreads {
  const data: ProbeThreadData = { options, reportEveryMs: REPORT_EVERY_MS };
  const startWorker = threadStarter(threading.entry ?? DIAGNOSTIC_THREAD_ENTRY, data);
  const backoff = threading.restart ?? RESTART_BACKOFF;
  const slots: Slot[] = Array.from({ length: Math.max(1, threading.threads) }, (_, index) => ({
    index,
    worker: null,
    send: () => undefined,
    pending: new Map(),
    delay: null,
    deaths: 0,
    liveSince: null,
    booted: Promise.resolve(),
    restart: null,
  }));
  const listeners = new Set<() => void>();
  const exitListeners = new Set<() => void>();
  let nextId = 0;
  let closing = false;
  let drained: (() => void) | null = null;

  const inFlight = () => slots.reduce((sum, slot) => sum + slot.pending.size, 0);

  const settle = (slot: Slot, id: number): Pending | undefined => {
    const pending = slot.pending.get(id);
    if (pending === undefined) return undefined;
    slot.pending.delete(id);
    if (pending.onAbort !== undefined) pending.signal?.removeEventListener("abort", pending.onAbort);
    // An idle thread must not keep a finished CLI or test process alive.
    if (slot.pending.size === 0) slot.worker?.unref();
    if (drained !== null && inFlight() === 0) drained();
    return pending;
  };

  const start = (slot: Slot) => {
    const worker = startWorker();
    worker.unref();
    slot.worker = worker;
    slot.send = batchedSender<ToProbeThread>((batch) => worker.postMessage(batch));
    slot.delay = null;
    let booted: () => void = () => undefined;
    slot.booted = new Promise((resolve) => (booted = resolve));
    let failure: string | null = null;
    const take = (message: FromProbeThread) => {
      if (message.type === "ready") {
        slot.liveSince = performance.now();
        return booted();
      }
      if (message.type === "loop-delay") {
        slot.delay = { thread: slot.index, p50Ms: message.p50Ms, p99Ms: message.p99Ms, maxMs: message.maxMs, inFlight: slot.pending.size };
        for (const listener of listeners) listener();
        return;
      }
      const pending = settle(slot, message.id);
      if (pending === undefined) return;
      if (message.type === "answer") pending.resolve(message.answer);
      else pending.reject(new Error(`probe thread ${slot.index}: ${message.message}`));
    };
    worker.on("message", (batch: Batch<FromProbeThread>) => {
      for (const message of batch) take(message);
    });
    worker.on("error", (error) => {
      failure = error.stack ?? error.message;
    });
    worker.on("exit", (code) => {
      booted();
      if (slot.worker !== worker) return;
      slot.worker = null;
      const reason = failure ?? `exit code ${code}`;
      const lost = [...slot.pending.keys()];
      // What it was running may have reached its target, but its answer is gone: the caller may retry, we do not.
      const overload: Overload = { why: "thread_lost", detail: `the probe thread running it stopped (${firstLine(reason)})` };
      for (const id of lost) settle(slot, id)?.reject(new ProbeThreadUnavailable(overload));
      if (closing) return;
      const livedMs = slot.liveSince === null ? 0 : performance.now() - slot.liveSince;
      slot.liveSince = null;
      slot.deaths = livedMs >= backoff.healthyAfterMs ? 1 : slot.deaths + 1;
      const restartInMs = restartDelayMs(slot.deaths, backoff);
      if (restartInMs === 0) start(slot);
      else startLater(slot, restartInMs);
      for (const listener of exitListeners) listener();
      threading.onThreadExit?.({ thread: slot.index, reason, lost: lost.length, replaced: true, restartInMs });
    });
  };
  /** Starts the slot's replacement after `delayMs`; ready() waits for it meanwhile (for its boot, or for close). */
  const startLater = (slot: Slot, delayMs: number) => {
    let wake: (booted: Promise<void>) => void = () => undefined;
    slot.booted = new Promise((resolve) => (wake = resolve));
    const now = () => {
      if (slot.restart === null) return;
      clearTimeout(slot.restart.timer);
      slot.restart = null;
      if (closing) return wake(Promise.resolve());
      start(slot);
      wake(slot.booted);
    };
    slot.restart = { timer: setTimeout(now, delayMs), now };
  };
  for (const slot of slots) start(slot);

  /** A booted thread with the fewest in flight; else one still booting (what is sent there waits for its boot). */
  const leastLoaded = (): Slot | undefined =>
    slots.reduce<Slot | undefined>((best, candidate) => {
      if (candidate.worker === null) return best;
      if (best === undefined) return candidate;
      const candidateLive = candidate.liveSince !== null;
      if (candidateLive !== (best.liveSince !== null)) return candidateLive ? candidate : best;
      return candidate.pending.size < best.pending.size ? candidate : best;
    }, undefined);

  /**
   * Sends one job to a thread; its answer resolves, a defect rejects, and a
   * thread that cannot answer it (dead, none running) rejects it with
   * ProbeThreadUnavailable.
   */
  const run = (job: unknown, signal?: AbortWatch): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (closing) {
        reject(new Error("the prober is closed"));
        return;
      }
      const slot = leastLoaded();
      const worker = slot?.worker ?? null;
      if (slot === undefined || worker === null) {
        reject(new ProbeThreadUnavailable({ why: "no_thread", detail: "no probe thread is running (each is being replaced)" }));
        return;
      }
      const id = nextId++;
      const onAbort = signal === undefined ? undefined : () => slot.send({ type: "cancel", id });
      slot.pending.set(id, { resolve, reject, signal, onAbort });
      if (slot.pending.size === 1) worker.ref();
      slot.send({ type: "job", id, job });
      if (signal !== undefined && onAbort !== undefined) {
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      }
    });

  const load: ProbeLoad = {
    loopDelays: () => slots.flatMap((slot) => (slot.delay === null || slot.worker === null ? [] : [slot.delay])),
    congested: () => {
      const live = slots.filter((slot) => slot.worker !== null);
      // The median, not the tail: a loop whose typical timer fires late has a backlog of its own making,
      // which more hops would lengthen; a rare late one (the machine's scheduler, a GC) is not helped by refusing work.
      return live.length > 0 && live.every((slot) => slot.delay !== null && slot.delay.p50Ms > threading.maxLoopDelayMs);
    },
    onReport: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    // Read by admission on every call: a count, no array.
    liveThreads: () => {
      let live = 0;
      for (const slot of slots) if (slot.worker !== null && slot.liveSince !== null) live += 1;
      return live;
    },
    onThreadExit: (listener) => {
      exitListeners.add(listener);
      return () => exitListeners.delete(listener);
    },
  };

  return {
    run,
    load,
    workers: () => slots.flatMap((slot) => (slot.worker === null ? [] : [slot.worker])),
    ready: async () => {
      await Promise.all(slots.map((slot) => slot.booted));
    },
    close: async () => {
      closing = true;
      for (const slot of slots) slot.restart?.now();
      if (inFlight() > 0) await new Promise<void>((resolve) => (drained = resolve));
      listeners.clear();
      exitListeners.clear();
      await Promise.all(slots.map((slot) => slot.worker?.terminate()));
    },
  };
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? text;
}
