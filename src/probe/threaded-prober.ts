import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";
import type { AbortWatch } from "./clock.js";
import { createAddressPolicy } from "./policy/address-policy.js";
import type { HopRequest, LoopDelayReport, ProbeLoad, Prober, ProberOptions, TimedHopOutcome } from "./hop-types.js";
import type { Overload } from "./overload.js";
import { sharedClockMs } from "./clock.js";
import { screenUrl } from "./policy/target-policy.js";
import { type Batch, batchedSender, toWire, type FromProbeThread, type ProbeThreadData, type ToProbeThread } from "./thread-messages.js";

export interface ThreadingOptions {
  /** Probe threads (SITEDIAG_PROBE_THREADS), at least 1. */
  readonly threads: number;
  /** A probe loop delayed beyond this (the median of its last report window) is congested. */
  readonly maxLoopDelayMs: number;
  /** Told when a probe thread stops on its own (crash, killed) and what became of it; for the log. */
  readonly onThreadExit?: (event: ThreadExit) => void;
  /**
   * The thread's module, when a layer above runs whole jobs on the threads
   * (`run`): a module that calls hostProbeThread with its job runner. Its
   * compiled `.js` URL, or the `.ts` source's (tests, tsx). The hops-only
   * probe-thread module beside this one when undefined.
   */
  readonly entry?: URL;
  /** How a dead thread is replaced; RESTART_BACKOFF when undefined (tests shorten it). */
  readonly restart?: RestartBackoff;
}

/**
 * A dead thread is always replaced, after a delay that grows with each death
 * in a row: a thread that dies as it boots (or whatever kills it keeps
 * coming) would otherwise be rebooted in a tight loop, a boot being tens of
 * milliseconds of CPU compiled and seconds from source. The first
 * replacement starts at once. The cap is short because the delay is also
 * time the slot serves nothing: a death a caller can cause should not buy
 * them a long outage (the other threads serve meanwhile; with none left the
 * service reports not ready and refuses checks with 503).
 */
export interface RestartBackoff {
  /** The delay before the second replacement in a row; each later one doubles it. */
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
  /** A thread that lived this long after its boot died healthy: the next replacement starts at once again. */
  readonly healthyAfterMs: number;
}

export const RESTART_BACKOFF: RestartBackoff = { firstDelayMs: 100, maxDelayMs: 2_000, healthyAfterMs: 10_000 };

export interface ThreadExit {
  readonly thread: number;
  readonly reason: string;
  /** Hops and jobs (under `serve`, whole checks) that were in flight on it, each answered as overload (retryable, never run again). */
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

/** A prober whose hops, and whole jobs of the layer above (a check), run on probe threads. */
export interface ThreadedProber extends Prober {
  readonly load: ProbeLoad;
  /**
   * Runs one job of the layer above, whole, on the thread with the fewest in
   * flight, by the entry's runner: `job` and the answer cross as plain data.
   * `signal` aborting cancels it there. Rejects with ProbeThreadUnavailable
   * when its thread died with it or none was running (it is not sent again),
   * otherwise only on a defect.
   */
  run(job: unknown, signal?: AbortWatch): Promise<unknown>;
  /** The live worker of each probe thread, in thread order (operations and tests). */
  threads(): readonly Worker[];
  /**
   * Resolves once every running thread has loaded and can start a hop at
   * once. A hop sent earlier waits for its thread, and that boot time (tens
   * of milliseconds compiled; seconds from TypeScript source on a loaded
   * machine) would count against a caller's own deadline: `serve` waits for
   * this before it listens, and the tests before each test.
   */
  ready(): Promise<void>;
}

/**
 * A probe thread's young generation (V8's nursery), in MiB. A thread's garbage
 * is nearly all short-lived (a hop's buffers, promises, outcome objects), and
 * V8's default nursery lets it grow to tens of MiB before a scavenge: memory
 * held for nothing. A nursery of a few MiB stays in cache: less CPU per check
 * than the default, and less memory with many checks in flight (figures, 4 MiB
 * against 8 and the default: docs/benchmarks.md).
 */
const YOUNG_GENERATION_MB = 8;
/** Loop delay reports per second from each thread: often enough to react within a tenth of a second. */
const REPORT_EVERY_MS = 100;
interface Pending {
  /** A hop's outcome, or a job's answer. */
  resolve(value: unknown): void;
  reject(error: Error): void;
  /** What a thread that cannot answer it makes of it: a hop's overloaded outcome (resolves), a job's ProbeThreadUnavailable (rejects). */
  readonly unavailable: (overload: Overload) => unknown;
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
 * The prober with its hops on `threads` worker threads, each a loop that does
 * nothing but probe: it owns the sockets, timers and resolvers, and takes
 * every timestamp, so the main thread's work (callers' HTTP, access, rendering)
 * never makes a measurement late. A hop goes to the thread with the fewest in
 * flight, or to the thread holding the connection it may reuse; a job (`run`,
 * with `entry`'s runner: `serve` runs each diagnostic so) to the thread with
 * the fewest in flight. Screening needs no network and runs here. A thread
 * that dies ends its hops and jobs in flight as overload (never silently,
 * never sent again, never a verdict on a target) and is always replaced,
 * after a backoff when it keeps dying.
 */
export function createThreadedProber(options: ProberOptions, threading: ThreadingOptions): ThreadedProber {
  const addresses = createAddressPolicy(options.allowCidrs);
  const data: ProbeThreadData = { options, reportEveryMs: REPORT_EVERY_MS };
  const entry = threadStart(threading.entry ?? new URL(import.meta.url.endsWith(".ts") ? "./probe-thread.ts" : "./probe-thread.js", import.meta.url));
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
    const worker = new Worker(entry.entry, Object.assign({}, entry.options, { workerData: data, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } }));
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
      if (message.type === "outcome") pending.resolve(message.outcome);
      else if (message.type === "answer") pending.resolve(message.answer);
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
      for (const id of lost) {
        const pending = settle(slot, id);
        if (pending !== undefined) settleUnavailable(pending.resolve, pending.reject, pending.unavailable(overload));
      }
      if (closing) return;
      const livedMs = slot.liveSince === null ? 0 : performance.now() - slot.liveSince;
      slot.liveSince = null;
      slot.deaths = livedMs >= backoff.healthyAfterMs ? 1 : slot.deaths + 1;
      const restartInMs = slot.deaths <= 1 ? 0 : Math.min(backoff.maxDelayMs, backoff.firstDelayMs * 2 ** (slot.deaths - 2));
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
  /** The thread holding the connection the hop may reuse; else the one with the fewest in flight. */
  const slotFor = (request: HopRequest): Slot | undefined =>
    (request.reuse === undefined ? undefined : slots.find((slot) => slot.worker !== null && slot.worker.threadId === request.reuse?.threadId)) ?? leastLoaded();

  /**
   * Sends one hop or job to a thread; the answer resolves, a defect rejects,
   * and a thread that cannot answer it (dead, none running) ends it as
   * `unavailable` says: a hop as an overloaded outcome, a job as a
   * ProbeThreadUnavailable rejection.
   */
  const dispatch = (
    slot: Slot | undefined,
    signal: AbortWatch | undefined,
    unavailable: (overload: Overload) => unknown,
    message: (id: number) => ToProbeThread,
  ): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (closing) {
        reject(new Error("the prober is closed"));
        return;
      }
      const worker = slot?.worker ?? null;
      if (slot === undefined || worker === null) {
        settleUnavailable(resolve, reject, unavailable({ why: "no_thread", detail: "no probe thread is running (each is being replaced)" }));
        return;
      }
      const id = nextId++;
      const onAbort = signal === undefined ? undefined : () => slot.send({ type: "cancel", id });
      slot.pending.set(id, { resolve, reject, unavailable, signal, onAbort });
      if (slot.pending.size === 1) worker.ref();
      slot.send(message(id));
      if (signal !== undefined && onAbort !== undefined) {
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      }
    });

  // Stamped here: the hop's timeout runs from now, not from when the thread gets to it.
  // The thread answers a hop message with nothing but a TimedHopOutcome.
  const hop = (request: HopRequest): Promise<TimedHopOutcome> =>
    dispatch(slotFor(request), request.signal, overloadedHop, (id) => ({ type: "hop", id, request: toWire(Object.assign({}, request, { askedAt: request.askedAt ?? sharedClockMs() })) })) as Promise<TimedHopOutcome>;
  const run = (job: unknown, signal?: AbortWatch): Promise<unknown> => dispatch(leastLoaded(), signal, unavailableJob, (id) => ({ type: "job", id, job }));

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
    screen: (url, ports) => screenUrl(url, ports, addresses),
    hop,
    run,
    load,
    threads: () => slots.flatMap((slot) => (slot.worker === null ? [] : [slot.worker])),
    ready: async () => {
      await Promise.all(slots.map((slot) => slot.booted));
    },
    // Graceful: the hops in flight finish (each ends within its own timeout), then the threads stop.
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

/** A hop no thread could answer: an outcome like any other, with an empty span (it never ran). */
function overloadedHop(overload: Overload): TimedHopOutcome {
  const at = sharedClockMs();
  return { kind: "overloaded", overload, span: { startedAt: at, endedAt: at } };
}

function unavailableJob(overload: Overload): ProbeThreadUnavailable {
  return new ProbeThreadUnavailable(overload);
}

/** `ended` is what `unavailable` made of the overload: an Error rejects, anything else resolves. */
function settleUnavailable(resolve: (value: unknown) => void, reject: (error: Error) => void, ended: unknown): void {
  if (ended instanceof Error) reject(ended);
  else resolve(ended);
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? text;
}

/**
 * How a probe thread is started: a compiled module (dist/) as it is; a
 * TypeScript source module (tests, `node --import tsx`) by a few lines that
 * register tsx's loader in the thread before importing it (on Node 20 a thread does not take `--import tsx` from its
 * execArgv in time for its own entry module).
 */
function threadStart(module: URL): { readonly entry: string | URL; readonly options: WorkerOptions } {
  if (!module.pathname.endsWith(".ts")) return { entry: module, options: {} };
  const tsx = createRequire(import.meta.url).resolve("tsx/esm/api").replace(/\.cjs$/, ".mjs");
  const source = module.href;
  const boot = `import(${JSON.stringify(pathToFileURL(tsx).href)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`;
  return { entry: boot, options: { eval: true, execArgv: [] } };
}
