import { describe, expect, it } from "vitest";
import {
  ANSWER_HOLD_MS,
  answerHoldMs,
  BUSY_UTILIZATION,
  batchedSender,
  MAX_BATCH,
  recentUtilization,
} from "../../src/runner/thread-messages.js";
import { until } from "../fixtures/until.js";

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("what crosses between the main thread and a probe thread", () => {
  it("sends everything one turn says as one batch, in order, and the next turn's as the next", async () => {
    const sent: (readonly number[])[] = [];
    const send = batchedSender<number>((batch) => sent.push(batch));
    send(1);
    send(2);
    // Still this turn: nothing has gone yet.
    expect(sent).toEqual([]);
    await turn();
    send(3);
    await turn();
    expect(sent).toEqual([[1, 2], [3]]);
  });

  it("sends a full batch at once, without waiting for the end of the turn, and keeps arrival order across batches", async () => {
    const sent: (readonly number[])[] = [];
    const send = batchedSender<number>((batch) => sent.push(batch));
    const count = MAX_BATCH * 2 + 3;
    for (let message = 0; message < count; message++) send(message);
    // Still this turn: the full batches have gone, the rest waits for the turn's end.
    expect(sent.map((batch) => batch.length)).toEqual([MAX_BATCH, MAX_BATCH]);
    await turn();
    expect(sent.map((batch) => batch.length)).toEqual([MAX_BATCH, MAX_BATCH, 3]);
    expect(sent.flat()).toEqual(Array.from({ length: count }, (_, message) => message));
    // A turn with nothing left to say sends nothing.
    await turn();
    expect(sent).toHaveLength(3);
  });
});

describe("a batch held for more", () => {
  it("takes the messages of later turns until its hold has passed, then goes as one batch", async () => {
    const sent: (readonly number[])[] = [];
    const holdMs = 30;
    const send = batchedSender<number>((batch) => sent.push(batch), { holdMs: () => holdMs });
    const startedAt = performance.now();
    send(1);
    await turn();
    send(2);
    await turn();
    send(3);
    await until(() => (sent.length > 0 ? true : undefined));
    // Only a lower bound: a loaded machine may run the timer late, never early.
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(holdMs - 1);
    expect(sent).toEqual([[1, 2, 3]]);
  });

  it("goes at once when full, whatever is left of its hold, and asks the hold again for the next batch", async () => {
    const sent: (readonly number[])[] = [];
    const asked: number[] = [];
    const send = batchedSender<number>((batch) => sent.push(batch), {
      holdMs: () => {
        asked.push(sent.length);
        // The first batch would wait a minute; the second goes at the end of its turn.
        return sent.length === 0 ? 60_000 : 0;
      },
    });
    send(0);
    await turn();
    for (let message = 1; message < MAX_BATCH; message++) send(message);
    expect(sent.map((batch) => batch.length)).toEqual([MAX_BATCH]);
    send(MAX_BATCH);
    await turn();
    expect(sent.map((batch) => batch.length)).toEqual([MAX_BATCH, 1]);
    expect(asked).toEqual([0, 1]);
  });
});

describe("a probe thread's answer", () => {
  it("is held for others only while its thread is busy with other jobs in flight: alone or idle, it goes at the end of its turn", () => {
    expect(answerHoldMs(1, 1)).toBe(0);
    expect(answerHoldMs(2, 1)).toBe(ANSWER_HOLD_MS);
    expect(answerHoldMs(40, BUSY_UTILIZATION)).toBe(ANSWER_HOLD_MS);
    expect(answerHoldMs(40, BUSY_UTILIZATION - 0.01)).toBe(0);
  });

  it("reads how busy its loop was in its last window: a loop kept spinning is busy, one left waiting is not", async () => {
    const windowMs = 40;
    const utilization = recentUtilization(windowMs);
    const spinUntil = performance.now() + 2 * windowMs;
    while (performance.now() < spinUntil);
    // The window's timer, overdue while the loop was held, runs in the next turn: that window was nearly all work.
    await new Promise((resolve) => setImmediate(resolve));
    expect(utilization()).toBeGreaterThanOrEqual(BUSY_UTILIZATION);
    // Left waiting, it is read idle within a few windows. Not within exactly three: CI's Node 22 line once read 1
    // after 120 ms, the test's process busy elsewhere while every timer was overdue. A reader that never updates
    // stays busy through all ten.
    let read = utilization();
    for (let window = 0; window < 10 && read >= BUSY_UTILIZATION; window++) {
      await new Promise((resolve) => setTimeout(resolve, windowMs));
      read = utilization();
    }
    expect(read).toBeLessThan(BUSY_UTILIZATION);
  });
});
