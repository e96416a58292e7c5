import { describe, expect, it } from "vitest";
import { decideCharge, summarize, type Charge } from "../../src/access/credit-log.js";

const policy = { budget: 10, windowSeconds: 60 };
const T = 1_700_000_000_000; // an epoch millisecond on a whole second

describe("sliding credit log", () => {
  it("counts a charge until exactly one window after it, and not a millisecond longer", () => {
    const log: Charge[] = [{ atMs: T, cost: 10 }];
    expect(decideCharge(log, T + 59_999, 1, policy).kind).toBe("rejected");
    expect(decideCharge(log, T + 60_000, 1, policy).kind).toBe("admitted");
  });

  it("admits up to the budget exactly and counts the new charge in the usage", () => {
    const decision = decideCharge([{ atMs: T, cost: 6 }], T + 1_000, 4, policy);
    expect(decision).toEqual({
      kind: "admitted",
      usage: { budget: 10, windowSeconds: 60, used: 10, remaining: 0, resetSeconds: 59, resetAtEpochSeconds: T / 1_000 + 60 },
    });
  });

  it("puts Retry-After at the moment enough of the oldest charges age out for this cost", () => {
    const log: Charge[] = [
      { atMs: T, cost: 2 },
      { atMs: T + 10_000, cost: 5 },
      { atMs: T + 20_500, cost: 2 },
    ];
    // used 9, one left; a 5 needs 4 freed: the first (2) is not enough, the second (5) is, at T+70 s.
    const decision = decideCharge(log, T + 30_000, 5, policy);
    expect(decision).toMatchObject({ kind: "rejected", retryAfterSeconds: 40, usage: { used: 9, remaining: 1, resetSeconds: 30 } });
    // a 2 needs 1 freed: the oldest, at T+60 s; seconds round up (29.5 -> 30).
    expect(decideCharge(log, T + 30_500, 2, policy)).toMatchObject({ kind: "rejected", retryAfterSeconds: 30 });
  });

  it("says never when one call costs more than the whole budget", () => {
    expect(decideCharge([], T, 11, policy)).toMatchObject({ kind: "rejected", retryAfterSeconds: null, usage: { used: 0, remaining: 10 } });
  });

  it("reports a quiet key as full with nothing to wait for", () => {
    expect(summarize([{ atMs: T - 60_000, cost: 3 }], T + 400, policy)).toEqual({
      budget: 10,
      windowSeconds: 60,
      used: 0,
      remaining: 10,
      resetSeconds: 0,
      resetAtEpochSeconds: T / 1_000 + 1,
    });
  });
});
