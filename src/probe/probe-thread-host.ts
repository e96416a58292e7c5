/**
 * The body of one probe thread (node:worker_threads): a loop that does
 * nothing but run hops, or whole jobs made of hops that a layer above hands
 * it (one diagnostic), so every timestamp a hop takes is read as soon as its
 * socket event happens, whatever the main thread is busy with. It owns its
 * own prober (resolvers, sockets, timers), reports its loop delay, and
 * answers each hop or job as plain data.
 */
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { type AbortWatch, createDeadline } from "./clock.js";
import { createProber, type LocalProber } from "./prober.js";
import { type Batch, batchedSender, fromWire, type FromProbeThread, type ProbeThreadData, type ToProbeThread } from "./thread-messages.js";

/**
 * Runs one job of the layer above on this thread's prober: `job` as the main
 * thread sent it; `signal` aborts when the caller cancels. Its answer must be
 * plain data (it is cloned back).
 */
export type JobRunner = (job: unknown, context: { readonly prober: LocalProber; readonly signal: AbortWatch }) => Promise<unknown>;

/**
 * Two starts per turn: with more, each dial's request goes out later and the
 * site sees a burst at once, which adds to every hop's reported time; with
 * one, a steady load takes more turns and smaller batches to the main
 * thread, and more CPU per check. Two cost the same CPU as eight (figures:
 * docs/benchmarks.md).
 */
const START_PER_TURN = 2;
// The delay this loop adds to every timestamp it takes: how late a 10 ms timer
// fires. The histogram holds the whole interval between firings, so the
// resolution itself is taken off.
const RESOLUTION_MS = 10;

/** Serves hops, and jobs when given a runner, on this worker thread until it is terminated. */
export function hostProbeThread(runJob?: JobRunner): void {
  if (parentPort === null) throw new Error("a probe thread runs only as a worker thread");
  const port: MessagePort = parentPort;
  const data = workerData as ProbeThreadData;
  const prober = createProber(data.options);
  /** What a cancel message ends: a hop's deadline, or a job's controller. */
  const running = new Map<number, { abort(reason?: unknown): void }>();
  const postAlone = (message: FromProbeThread): void => {
    try {
      port.postMessage([message]);
    } catch (error) {
      if ("id" in message) port.postMessage([{ type: "defect", id: message.id, message: describe(error) } satisfies FromProbeThread]);
    }
  };
  const post = batchedSender<FromProbeThread>((batch) => {
    try {
      port.postMessage(batch);
    } catch {
      // One message that cannot be cloned must not take the others with it: each goes alone, a bad one as its defect.
      for (const message of batch) postAlone(message);
    }
  });

  /**
   * Hops and jobs that arrived and are not started yet. A burst of calls
   * arrives as one batch of messages; starting them all in one go (screening,
   * a dial each) would hold this loop for as long, and every hop already in
   * flight would read its timestamps that much late. So a few are started
   * per turn of the loop, and socket events are seen in between. A hop's
   * time starts when it starts (its span), so waiting here is not counted.
   */
  const waiting: { readonly id: number; readonly start: () => Promise<FromProbeThread> }[] = [];
  const startSome = (): void => {
    for (const work of waiting.splice(0, START_PER_TURN)) void answer(work.id, work.start);
    if (waiting.length > 0) setImmediate(startSome);
  };
  /** Every hop or job gets exactly one answer: its outcome, or the defect that kept it from one (one that cannot be cloned included). */
  const answer = async (id: number, start: () => Promise<FromProbeThread>): Promise<void> => {
    try {
      post(await start());
    } catch (error) {
      post({ type: "defect", id, message: describe(error) });
    } finally {
      running.delete(id);
    }
  };

  const take = (message: ToProbeThread): void => {
    if (message.type === "cancel") {
      running.get(message.id)?.abort(new Error("cancelled by the caller"));
      return;
    }
    // The hop's own deadline, or the job's (a diagnostic reads it as its signal): a cancel message aborts it directly.
    const { id } = message;
    let start: () => Promise<FromProbeThread>;
    if (message.type === "hop") {
      const deadline = createDeadline();
      running.set(id, deadline);
      start = async () => ({ type: "outcome", id, outcome: await prober.hopWith(fromWire(message.request), deadline) });
    } else {
      const cancel = createDeadline();
      running.set(id, cancel);
      start = async () => {
        if (runJob === undefined) throw new Error("this probe thread runs hops only");
        return { type: "answer", id, answer: await runJob(message.job, { prober, signal: cancel.signal }) };
      };
    }
    waiting.push({ id, start });
    if (waiting.length === 1) setImmediate(startSome);
  };
  port.on("message", (batch: Batch<ToProbeThread>) => {
    for (const message of batch) take(message);
  });

  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  delay.enable();
  setInterval(() => {
    const ms = (ns: number) => (delay.count === 0 ? 0 : Math.max(0, ns / 1e6 - RESOLUTION_MS));
    post({ type: "loop-delay", p50Ms: ms(delay.percentile(50)), p99Ms: ms(delay.percentile(99)), maxMs: ms(delay.max) });
    delay.reset();
  }, data.reportEveryMs);
  post({ type: "ready" });
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
