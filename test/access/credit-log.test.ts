import { describe, expect, it } from "vitest";
import { decideCharge, expiryHorizonMs, usageOf, type Charge, type WindowState } from "../../src/access/credit-log.js";

const policy = { budget: 10, windowSeconds: 60 };
const T = 1_700_000_000_000; // an epoch millisecond on a whole second

/** What a store holds after expiring at `nowMs`: the live log oldest first, and its total and oldest charge. */
function windowAt(log: readonly Charge[], nowMs: number): { state: WindowState; live: Charge[] } {
  const live = log.filter((charge) => charge.atMs > expiryHorizonMs(nowMs, policy)).sort((a, b) => a.atMs - b.atMs);
  return { state: { used: live.reduce((total, charge) => total + charge.cost, 0), oldestAtMs: live[0]?.atMs ?? null }, live };
}

function decide(log: readonly Charge[], nowMs: number, cost: number) {
  const { state, live } = windowAt(log, nowMs);
  return decideCharge(state, nowMs, cost, policy, () => live);
}

describe("sliding credit log", () => {
  it("counts a charge until exactly one window after it, and not a millisecond longer", () => {
    const log: Charge[] = [{ atMs: T, cost: 10 }];
    expect(decide(log, T + 59_999, 1).kind).toBe("rejected");
    expect(decide(log, T + 60_000, 1).kind).toBe("admitted");
  });

  it("admits up to the budget exactly and counts the new charge in the usage", () => {
    const decision = decide([{ atMs: T, cost: 6 }], T + 1_000, 4);
    expect(decision).toEqual({
      kind: "admitted",
      usage: { budget: 10, windowSeconds: 60, used: 10, remaining: 0, resetSeconds: 59, resetAtEpochSeconds: T / 1_000 + 60 },
    });
  });

  it("dates the reset from the new charge when it is the only one", () => {
    expect(decide([], T + 500, 2)).toMatchObject({
      kind: "admitted",
      usage: { used: 2, resetSeconds: 60, resetAtEpochSeconds: T / 1_000 + 61 },
    });
  });

  it("puts Retry-After at the moment enough of the oldest charges age out for this cost", () => {
    const log: Charge[] = [
      { atMs: T, cost: 2 },
      { atMs: T + 10_000, cost: 5 },
      { atMs: T + 20_500, cost: 2 },
    ];
    // used 9, one left; a 5 needs 4 freed: the first (2) is not enough, the second (5) is, at T+70 s.
    const decision = decide(log, T + 30_000, 5);
    expect(decision).toMatchObject({ kind: "rejected", retryAfterSeconds: 40, usage: { used: 9, remaining: 1, resetSeconds: 30 } });
    // a 2 needs 1 freed: the oldest, at T+60 s; seconds round up (29.5 -> 30).
    expect(decide(log, T + 30_500, 2)).toMatchObject({ kind: "rejected", retryAfterSeconds: 30 });
  });

  it("reads the log only on a refusal, and only as far as the refused cost needs", () => {
    const big = { budget: 1_000, windowSeconds: 60 };
    const log = Array.from({ length: 1_000 }, (_, i): Charge => ({ atMs: T + i, cost: 1 }));
    let read = 0;
    const oldestFirst = function* () {
      for (const charge of log) {
        read += 1;
        yield charge;
      }
    };
    const state = { used: 1_000, oldestAtMs: T };
    expect(decideCharge({ used: 990, oldestAtMs: T }, T + 1_000, 5, big, oldestFirst).kind).toBe("admitted");
    expect(read).toBe(0);
    expect(decideCharge(state, T + 1_000, 5, big, oldestFirst)).toMatchObject({ kind: "rejected", retryAfterSeconds: 60 });
    expect(read).toBe(5);
  });

  it("says never when one call costs more than the whole budget", () => {
    expect(decide([], T, 11)).toMatchObject({ kind: "rejected", retryAfterSeconds: null, usage: { used: 0, remaining: 10 } });
  });

  it("reports a quiet key as full with nothing to wait for", () => {
    expect(usageOf(windowAt([{ atMs: T - 60_000, cost: 3 }], T + 400).state, T + 400, policy)).toEqual({
      budget: 10,
      windowSeconds: 60,
      used: 0,
      remaining: 10,
      resetSeconds: 0,
      resetAtEpochSeconds: T / 1_000 + 1,
    });
  });
});
