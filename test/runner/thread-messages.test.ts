import { describe, expect, it } from "vitest";
import { batchedSender, MAX_BATCH } from "../../src/runner/thread-messages.js";

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
