import { describe, expect, it } from "vitest";
import { batchedSender } from "../../src/runner/thread-messages.js";

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
});
