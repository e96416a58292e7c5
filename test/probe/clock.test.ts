import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { createDeadline, fullTimeout, now } from "../../src/probe/clock.js";
import { createProber } from "../../src/probe/prober.js";
import { USER_AGENT } from "../../src/package-info.js";
import { startRawTarget } from "../fixtures/raw-targets.js";

describe("a hop's deadline", () => {
  it("runs its listeners once, in order, when aborted, and none that were removed", () => {
    const deadline = createDeadline();
    const heard: string[] = [];
    const removed = () => heard.push("removed");
    deadline.signal.addEventListener("abort", () => heard.push("first"), { once: true });
    deadline.signal.addEventListener("abort", removed, { once: true });
    deadline.signal.addEventListener("abort", () => heard.push("second"), { once: true });
    deadline.signal.removeEventListener("abort", removed);
    expect(deadline.signal.aborted).toBe(false);
    deadline.abort();
    deadline.abort();
    expect(deadline.signal.aborted).toBe(true);
    expect(heard).toEqual(["first", "second"]);
  });

  it("runs no listener added after it aborted, as an AbortSignal does not", () => {
    const deadline = createDeadline();
    deadline.abort();
    let heard = false;
    deadline.signal.addEventListener("abort", () => (heard = true));
    deadline.abort();
    expect(heard).toBe(false);
  });

  it("runs every listener when one throws, and reports the throw as uncaught", async () => {
    const deadline = createDeadline();
    const heard: string[] = [];
    deadline.signal.addEventListener("abort", () => {
      throw new Error("listener broke");
    });
    deadline.signal.addEventListener("abort", () => heard.push("after"));
    const uncaught = new Promise<unknown>((resolve) => process.once("uncaughtException", resolve));
    deadline.abort();
    expect(heard).toEqual(["after"]);
    expect(await uncaught).toMatchObject({ message: "listener broke" });
  });

  it("keeps the reason of the first abort, as an AbortSignal does (a cancelled diagnostic reports it)", () => {
    const deadline = createDeadline();
    expect(deadline.signal.reason).toBeUndefined();
    const first = new Error("cancelled by the caller");
    let seen: unknown;
    deadline.signal.addEventListener("abort", () => (seen = deadline.signal.reason));
    deadline.abort(first);
    deadline.abort(new Error("later"));
    expect(deadline.signal.reason).toBe(first);
    expect(seen).toBe(first);
  });
});

describe("fullTimeout", () => {
  // A plain setTimeout(7) fired early in 2 of 200 tries here (as early as 6.22 ms).
  it("fires no earlier than asked by this thread's clock", async () => {
    const waited: number[] = [];
    for (let round = 0; round < 200; round++) {
      const armedAt = now();
      await new Promise<void>((resolve) => fullTimeout(7, () => resolve()));
      waited.push(now() - armedAt);
    }
    expect(Math.min(...waited)).toBeGreaterThanOrEqual(7);
  });

  // libuv counts timers in whole milliseconds from its loop time: a plain setTimeout armed 0.9 ms into a
  // millisecond can fire 0.9 ms early by now(). CI saw a 1,000 ms hop timeout fire after 999.6 ms.
  it("a hop's timeout gives a silent target its whole time by the hop's own clock", async () => {
    const target = await startRawTarget({ kind: "silent" });
    const prober = createProber({ allowCidrs: ["127.0.0.0/8"], dnsServers: [], userAgent: USER_AGENT });
    try {
      const totals: number[] = [];
      for (let round = 0; round < 30; round++) {
        const outcome = await prober.hop({ url: new URL(target.url), method: "GET", timeoutMs: 20, ports: { kind: "fetch-safe" } });
        if (outcome.kind !== "failure" || !outcome.failure.timedOut) throw new Error(JSON.stringify(outcome));
        totals.push(outcome.trace.timings.totalMs);
      }
      expect(Math.min(...totals)).toBeGreaterThanOrEqual(20);
    } finally {
      await prober.close();
      await target.close();
    }
  });

  it("clear() stops it", async () => {
    let fired = false;
    fullTimeout(10, () => (fired = true)).clear();
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(fired).toBe(false);
  });

  // A busy machine can hold a probe thread past a hop's deadline while the target's answer waits in the socket:
  // libuv then runs the due timer before it reads that socket, and the target was reported silent for our delay.
  it("an answer that arrived while this thread was held wins over the timer that fell due meanwhile", async () => {
    // The target lives in a process of its own, so that holding this thread does not hold it: it answers at 50 ms.
    const child = spawn(
      process.execPath,
      [
        "-e",
        `const server = require("node:http").createServer((request, response) => setTimeout(() => response.end("ok"), 50));
         server.listen(0, "127.0.0.1", () => console.log(server.address().port));`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      const [line] = (await once(child.stdout, "data")) as [Buffer];
      const url = new URL(`http://127.0.0.1:${line.toString().trim()}/`);
      const prober = createProber({ allowCidrs: ["127.0.0.0/8"], dnsServers: [], userAgent: USER_AGENT });
      try {
        // A warm-up hop, so the held one spends its time on the wire and not in loading code.
        await prober.hop({ url, method: "GET", timeoutMs: 5_000, ports: { kind: "fetch-safe" } });
        const hop = prober.hop({ url, method: "GET", timeoutMs: 300, ports: { kind: "fetch-safe" } });
        // Hold this thread from 20 ms to 1 s: the answer (due at ~50 ms) and the 300 ms deadline both fall inside.
        // Held from the loop's check phase, as work of other hops holds it: the next turn starts with its timers.
        await new Promise((resolve) => setTimeout(resolve, 20));
        await new Promise((resolve) => setImmediate(resolve));
        const heldUntil = now() + 1_000;
        while (now() < heldUntil);
        const outcome = await hop;
        expect(outcome.kind === "response" ? outcome.response.status : outcome).toBe(200);
      } finally {
        await prober.close();
      }
    } finally {
      child.kill();
    }
  });
});
