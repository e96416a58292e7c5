import { describe, expect, it } from "vitest";
import { bodyDrain, MAX_DRAIN_BYTES, type BodyDrain, type DrainState } from "../../../src/probe/http/body-drain.js";
import type { Framing } from "../../../src/probe/http/body-prefix.js";

/** Feeds the bytes in pieces of `step` and returns the state after each piece. */
function feed(drain: BodyDrain, text: string, step = text.length): DrainState[] {
  const bytes = Buffer.from(text, "latin1");
  const states: DrainState[] = [];
  for (let at = 0; at < bytes.length; at += step) states.push(drain.push(bytes.subarray(at, at + step)));
  return states;
}

function drainOf(framing: Framing): BodyDrain {
  const drain = bodyDrain(framing);
  if (drain === null) throw new Error(`no drain for ${JSON.stringify(framing)}`);
  return drain;
}

const chunked: Framing = { kind: "chunked" };

describe("reading a body through to its end", () => {
  it("Content-Length: done at the length, broken by a byte more, in any pieces", () => {
    expect(drainOf({ kind: "length", length: 0 }).state()).toBe("done");
    expect(feed(drainOf({ kind: "length", length: 5 }), "moved", 1)).toEqual(["more", "more", "more", "more", "done"]);
    expect(feed(drainOf({ kind: "length", length: 5 }), "moved!")).toEqual(["broken"]);
    const drain = drainOf({ kind: "length", length: 2 });
    feed(drain, "ok");
    expect(feed(drain, "x")).toEqual(["broken"]);
    expect(drain.state()).toBe("broken");
  });

  it.each([1, 2, 7, 1000])("chunked, fed %i bytes at a time: done only after the trailers' empty line", (step) => {
    const body = "5\r\nmoved\r\n3;ext=1\r\nabc\r\n0\r\nx-trailer: 1\r\n\r\n";
    const states = feed(drainOf(chunked), body, step);
    expect(states.at(-1)).toBe("done");
    expect(states.slice(0, -1).every((state) => state === "more")).toBe(true);
  });

  it.each([
    ["bare LF line ends", "5\nmoved\n0\n\n", "done"],
    ["the last chunk without its empty line yet", "0\r\n", "more"],
    ["a byte after the end", "0\r\n\r\nH", "broken"],
    ["a size that is not hex", "zz\r\n", "broken"],
    ["data longer than its size", "2\r\nabc\r\n", "broken"],
  ] as const)("chunked with %s: %s", (_case, body, state) => {
    expect(feed(drainOf(chunked), body).at(-1)).toBe(state);
  });

  it("a body that cannot end within the limit is not drained at all", () => {
    expect(bodyDrain({ kind: "length", length: MAX_DRAIN_BYTES + 1 })).toBeNull();
    expect(bodyDrain({ kind: "close" })).toBeNull();
    expect(bodyDrain({ kind: "invalid" })).toBeNull();
    const endless = drainOf(chunked);
    const chunk = `1000\r\n${"a".repeat(0x1000)}\r\n`;
    let state: DrainState = "more";
    for (let i = 0; i < 20 && state === "more"; i++) state = endless.push(Buffer.from(chunk, "latin1"));
    expect(state).toBe("broken");
  });

  it("endless trailers are refused", () => {
    const drain = drainOf(chunked);
    feed(drain, "0\r\n");
    let state: DrainState = "more";
    for (let i = 0; i < 100 && state === "more"; i++) state = drain.push(Buffer.from(`x-${i}: ${"v".repeat(200)}\r\n`, "latin1"));
    expect(state).toBe("broken");
  });
});
