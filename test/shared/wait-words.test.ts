import { describe, expect, it } from "vitest";
import { utcClockWords, waitUntilWords, waitWords } from "../../src/shared/wait-words.js";

describe("a wait as people read it", () => {
  it.each([
    [0, "0 s"],
    [40, "40 s"],
    [60, "1 min"],
    [61, "2 min"],
    [3_599, "1 h"],
    [5_120, "1 h 26 min"],
    [86_340, "23 h 59 min"],
    [86_398, "24 h"],
  ])("%d seconds is %s, rounded up so nobody waiting as told is early", (seconds, words) => {
    expect(waitWords(seconds)).toBe(words);
  });

  it("names the UTC time it ends, with the date when that is another day", () => {
    const now = new Date("2026-11-26T03:30:10Z");
    expect(utcClockWords(new Date("2026-11-26T09:05:00Z"), now)).toBe("09:05 UTC");
    expect(utcClockWords(new Date("2026-11-27T03:30:00Z"), now)).toBe("2026-11-27 03:30 UTC");
    expect(waitUntilWords(86_340, now)).toBe("in 23 h 59 min (at 2026-11-27 03:30 UTC)");
    expect(waitUntilWords(120, now)).toBe("in 2 min (at 03:33 UTC)");
  });
});
