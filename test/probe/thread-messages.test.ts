import { describe, expect, it } from "vitest";
import { batchedSender, fromWire, toWire } from "../../src/probe/thread-messages.js";

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

  it("carries a request's fields across and replaces only what cannot be cloned", () => {
    const controller = new AbortController();
    const wire = toWire({ url: new URL("http://127.0.0.1:8080/a?b"), method: "HEAD", timeoutMs: 100, ports: { kind: "fetch-safe" }, signal: controller.signal, cookie: "c=1", askedAt: 12.5 });
    expect(structuredClone(wire)).toEqual({ url: "http://127.0.0.1:8080/a?b", method: "HEAD", timeoutMs: 100, ports: { kind: "fetch-safe" }, cookie: "c=1", askedAt: 12.5 });
    const back = fromWire(wire);
    expect(back.url.href).toBe("http://127.0.0.1:8080/a?b");
    // The signal stays behind: the thread ends the hop through its own deadline controller on a cancel message.
    expect(back.signal).toBeUndefined();
  });
});
