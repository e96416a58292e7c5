import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProbeThreads, type ProbeThreads } from "../../src/runner/probe-threads.js";
import type { Batch, FromProbeThread } from "../../src/runner/thread-messages.js";
import { USER_AGENT } from "../../src/package-info.js";
import type { TurnsJob } from "../fixtures/turns-thread.js";
import { LOOPBACK_CIDRS } from "../fixtures/test-env.js";

/**
 * How a busy probe thread's answers cross back: while its loop is busy with
 * other jobs in flight, an answer waits (ANSWER_HOLD_MS) for others to go
 * with it, so the main thread wakes once for several calls rather than once
 * for each; a thread that is not busy answers at the end of each turn.
 */
let threads: ProbeThreads;
const answerBatches: number[] = [];

beforeAll(async () => {
  const entry = new URL("../fixtures/turns-thread.ts", import.meta.url);
  threads = createProbeThreads(
    { allowCidrs: LOOPBACK_CIDRS, dnsServers: [], userAgent: USER_AGENT },
    { threads: 1, maxLoopDelayMs: 1_000, entry },
  );
  await threads.ready();
  // A second listener on the thread's own messages: it sees each batch as the bridge does.
  threads.workers()[0]?.on("message", (batch: Batch<FromProbeThread>) => {
    const answers = batch.filter((message) => message.type === "answer").length;
    if (answers > 0) answerBatches.push(answers);
  });
}, 30_000);

afterAll(async () => {
  await threads.close();
});

describe("a probe thread's answers", () => {
  it("of jobs finishing a turn apart on a busy thread cross back several at once, each to its own call", async () => {
    answerBatches.length = 0;
    // A turn of about a millisecond of work, for well over two windows of the thread's utilization before the first answer.
    const jobs = Array.from({ length: 12 }, (_, index) => ({ turns: 150 + index, spinMs: 0.1 }) satisfies TurnsJob);
    const answers = await Promise.all(jobs.map((job) => threads.run(job)));
    expect(answers).toEqual(jobs.map((job) => job.turns));
    expect(answerBatches.reduce((sum, count) => sum + count, 0)).toBe(jobs.length);
    // A turn apart, each answer went in a batch of its own before; a machine that stalls the thread can split a hold, not undo it.
    expect(answerBatches.length).toBeLessThanOrEqual(jobs.length / 2);
  });

  it("of jobs finishing a turn apart on an idle thread cross back a turn at a time", async () => {
    answerBatches.length = 0;
    // Turns that do nothing: the thread waits in its loop most of the time.
    const jobs = Array.from({ length: 6 }, (_, index) => ({ turns: 1 + index, spinMs: 0 }) satisfies TurnsJob);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const answers = await Promise.all(jobs.map((job) => threads.run(job)));
    expect(answers).toEqual(jobs.map((job) => job.turns));
    expect(answerBatches).toEqual(jobs.map(() => 1));
  });
});
