/**
 * The arithmetic of the rolling budget, shared by every store so both answer
 * identically. A store keeps a sliding log of charges per key; a charge made
 * at `atMs` counts while `now < atMs + window` and is gone from then on.
 */

/** The budget every key gets, per rolling window. */
export interface CreditPolicy {
  readonly budget: number;
  readonly windowSeconds: number;
}

/** One admitted charge in a key's log. */
export interface Charge {
  readonly atMs: number;
  readonly cost: number;
}

/** A key's standing at one instant, as the usage headers report it. */
export interface Usage {
  readonly budget: number;
  readonly windowSeconds: number;
  /** Credits charged in the last window. */
  readonly used: number;
  /** budget - used, never below zero. */
  readonly remaining: number;
  /** Whole seconds, rounded up, until the oldest charge ages out and some credits free up; 0 when nothing is charged. */
  readonly resetSeconds: number;
  /** Epoch second, rounded up, when the oldest charge ages out; the current second when nothing is charged. */
  readonly resetAtEpochSeconds: number;
}

export type ChargeDecision =
  | { readonly kind: "admitted"; readonly usage: Usage }
  | {
      readonly kind: "rejected";
      readonly usage: Usage;
      /** Whole seconds, rounded up, until this cost fits; null when the cost exceeds the whole budget. */
      readonly retryAfterSeconds: number | null;
    };

/** Charges still inside the window at `nowMs`, oldest first. */
export function liveCharges(log: readonly Charge[], nowMs: number, policy: CreditPolicy): Charge[] {
  const horizon = nowMs - policy.windowSeconds * 1_000;
  return log.filter((charge) => charge.atMs > horizon).sort((a, b) => a.atMs - b.atMs);
}

/** Decides whether `cost` fits; an admitted charge is stamped `nowMs` and counted in the returned usage. */
export function decideCharge(log: readonly Charge[], nowMs: number, cost: number, policy: CreditPolicy): ChargeDecision {
  const live = liveCharges(log, nowMs, policy);
  const used = sum(live);
  if (used + cost <= policy.budget) {
    return { kind: "admitted", usage: summarize([...live, { atMs: nowMs, cost }], nowMs, policy) };
  }
  return { kind: "rejected", usage: summarize(live, nowMs, policy), retryAfterSeconds: secondsUntilFits(live, used, nowMs, cost, policy) };
}

/** Usage from a log, without charging anything. */
export function summarize(log: readonly Charge[], nowMs: number, policy: CreditPolicy): Usage {
  const live = liveCharges(log, nowMs, policy);
  const used = sum(live);
  const oldest = live[0];
  const freesAtMs = oldest === undefined ? nowMs : oldest.atMs + policy.windowSeconds * 1_000;
  return {
    budget: policy.budget,
    windowSeconds: policy.windowSeconds,
    used,
    remaining: Math.max(0, policy.budget - used),
    resetSeconds: Math.ceil((freesAtMs - nowMs) / 1_000),
    resetAtEpochSeconds: Math.ceil(freesAtMs / 1_000),
  };
}

/** Walks the log oldest first until enough credits have aged out for `cost` to fit. */
function secondsUntilFits(live: readonly Charge[], used: number, nowMs: number, cost: number, policy: CreditPolicy): number | null {
  if (cost > policy.budget) return null;
  const mustFree = used + cost - policy.budget;
  let freed = 0;
  for (const charge of live) {
    freed += charge.cost;
    if (freed >= mustFree) return Math.ceil((charge.atMs + policy.windowSeconds * 1_000 - nowMs) / 1_000);
  }
  return null;
}

function sum(log: readonly Charge[]): number {
  return log.reduce((total, charge) => total + charge.cost, 0);
}
