/**
 * The body of one probe thread (node:worker_threads): a loop that does
 * nothing but run whole diagnostics handed to it, so every timestamp a hop
 * takes is read as soon as its socket event happens, whatever the main
 * thread is busy with. It owns its own prober (resolvers, sockets, timers),
 * reports its loop delay, and answers each job as plain data.
 */
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { type AbortWatch, createDeadline } from "../probe/clock.js";
import type { HopOutcome, Prober } from "../probe/hop-types.js";
import { createProber } from "../probe/prober.js";
import type { DiagnosticAnswer, DiagnosticJob, HopTally } from "./diagnostic-runner.js";
import { runDiagnostic } from "./local-runner.js";
import {
  answerHoldMs,
  recentUtilization,
  type Batch,
  batchedSender,
  type FromProbeThread,
  type ProbeThreadData,
  type ToProbeThread,
} from "./thread-messages.js";

/**
 * Runs one job on this thread's prober: `job` as the main thread sent it;
 * `signal` aborts when the caller cancels. Its answer must be plain data (it
 * is cloned back).
 */
export type JobRunner = (job: unknown, context: { readonly prober: Prober; readonly signal: AbortWatch }) => Promise<unknown>;

/**
 * The job runner of a diagnostic thread: runs the diagnostic whole with the
 * thread's own prober, as the local runner does, and answers its outcome
 * with how each of its hops ended (for the hop metric on the main thread).
 */
export const runDiagnosticJob: JobRunner = async (job, { prober, signal }) => {
  const hops: HopTally[] = [];
  // The main thread sends a diagnostic thread nothing but DiagnosticJobs (threaded-runner.ts).
  const outcome = await runDiagnostic(job as DiagnosticJob, prober, signal, (hop) => hops.push(tallyOf(hop)));
  return { outcome, hops } satisfies DiagnosticAnswer;
};

/** Only what counting reads, so the answer does not carry each outcome twice. */
function tallyOf(outcome: HopOutcome): HopTally {
  if (outcome.kind !== "failure") return { kind: outcome.kind };
  return { kind: "failure", failure: { stage: outcome.failure.stage, timedOut: outcome.failure.timedOut } };
}

/**
 * Two starts per turn: with more, each dial's request goes out later and the
 * site sees a burst at once, which adds to every hop's reported time; with
 * one, a steady load takes more turns and smaller batches to the main
 * thread, and more CPU per check. Two cost the same CPU as eight (figures:
 * docs/benchmarks.md).
 */
const START_PER_TURN = 2;
/** How recent the loop utilization an answer's hold reads (answerHoldMs): a few dozen handshakes. */
const UTILIZATION_WINDOW_MS = 50;
// The delay this loop adds to every timestamp it takes: how late a 10 ms timer
// fires. The histogram holds the whole interval between firings, so the
// resolution itself is taken off.
const RESOLUTION_MS = 10;

/** Serves jobs with `runJob` on this worker thread until it is terminated. */
export function hostProbeThread(runJob: JobRunner = runDiagnosticJob): void {
  if (parentPort === null) throw new Error("a probe thread runs only as a worker thread");
  const port: MessagePort = parentPort;
  const data = workerData as ProbeThreadData;
  const prober = createProber(data.options);
  /** What a cancel message ends: a job's controller, whose signal the job reads. */
  const running = new Map<number, { abort(reason?: unknown): void }>();
  const utilization = recentUtilization(UTILIZATION_WINDOW_MS);
  const postAlone = (message: FromProbeThread): void => {
    try {
      port.postMessage([message]);
    } catch (error) {
      if ("id" in message) port.postMessage([{ type: "defect", id: message.id, message: describe(error) } satisfies FromProbeThread]);
    }
  };
  const post = batchedSender<FromProbeThread>(
    (batch) => {
      try {
        port.postMessage(batch);
      } catch {
        // One message that cannot be cloned must not take the others with it: each goes alone, a bad one as its defect.
        for (const message of batch) postAlone(message);
      }
    },
    // The job answering is still in `running` when its answer is queued.
    { holdMs: () => answerHoldMs(running.size, utilization()) },
  );

  /**
   * Jobs that arrived and are not started yet. A burst of calls
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
  /** Every job gets exactly one answer: its own, or the defect that kept it from one (one that cannot be cloned included). */
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
    // The job's own controller (a diagnostic reads it as its signal): a cancel message aborts it directly.
    const { id, job } = message;
    const cancel = createDeadline();
    running.set(id, cancel);
    const start = async (): Promise<FromProbeThread> => ({
      type: "answer",
      id,
      answer: await runJob(job, { prober, signal: cancel.signal }),
    });
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
