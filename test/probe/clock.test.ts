import { describe, expect, it } from "vitest";
import { createDeadline } from "../../src/probe/clock.js";

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
