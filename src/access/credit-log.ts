/**
 * The arithmetic of the rolling budget, shared by every store so both answer
 * identically. A store keeps a sliding log of charges per key; a charge made
 * at `atMs` counts while `now < atMs + window` and is gone from then on.
 *
 * Stores do not hand the whole log over: they keep a running total of the
 * credits in the window and know their oldest charge, which is all an
 * admitted charge needs. Only a refusal walks the log, oldest first, and only
 * as far as it takes to free the refused cost.
 */

/** The budget every key gets, per rolling window. */
export interface CreditPolicy {
  readonly budget: number;
  readonly windowSeconds: number;
}

/** The policy a key is held to: the instance's window, and its own budget when it has one. */
export function policyForKey(policy: CreditPolicy, keyBudget: number | null): CreditPolicy {
  return keyBudget === null ? policy : { budget: keyBudget, windowSeconds: policy.windowSeconds };
}

/** A budget a key may be given: a whole number of credits, as SITEDIAG_CREDIT_BUDGET takes. */
export const MAX_KEY_BUDGET = 1_000_000_000;

/** One admitted charge in a key's log. */
export interface Charge {
  readonly atMs: number;
  readonly cost: number;
}

/** What a store knows about a key's window at one instant, after dropping the charges that aged out. */
export interface WindowState {
  /** Credits charged in the last window. */
  readonly used: number;
  /** When the oldest charge still in the window was made; null when there is none. */
  readonly oldestAtMs: number | null;
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

/** The newest instant a charge made at `atMs` no longer counts: charges at or before `nowMs - window` are gone. */
export function expiryHorizonMs(nowMs: number, policy: CreditPolicy): number {
  return nowMs - windowMs(policy);
}

/**
 * Decides whether `cost` fits the window described by `state`; an admitted
 * charge is stamped `nowMs` and counted in the returned usage. `oldestFirst`
 * is read only on a refusal, and only until enough credits have aged out.
 */
export function decideCharge(
  state: WindowState,
  nowMs: number,
  cost: number,
  policy: CreditPolicy,
  oldestFirst: () => Iterable<Charge>,
): ChargeDecision {
  if (state.used + cost <= policy.budget) {
    return { kind: "admitted", usage: usageOf({ used: state.used + cost, oldestAtMs: state.oldestAtMs ?? nowMs }, nowMs, policy) };
  }
  return {
    kind: "rejected",
    usage: usageOf(state, nowMs, policy),
    retryAfterSeconds: secondsUntilFits(state.used, nowMs, cost, policy, oldestFirst),
  };
}

/** The usage headers' numbers for a window, charging nothing. */
export function usageOf(state: WindowState, nowMs: number, policy: CreditPolicy): Usage {
  const freesAtMs = state.oldestAtMs === null ? nowMs : state.oldestAtMs + windowMs(policy);
  return {
    budget: policy.budget,
    windowSeconds: policy.windowSeconds,
    used: state.used,
    remaining: Math.max(0, policy.budget - state.used),
    resetSeconds: Math.ceil((freesAtMs - nowMs) / 1_000),
    resetAtEpochSeconds: Math.ceil(freesAtMs / 1_000),
  };
}

/**
 * Walks the log oldest first until enough credits have aged out for `cost`
 * to fit. Stops early: since `used <= budget`, at most `cost` credits must
 * be freed, so the walk reads a handful of charges however long the log is.
 */
function secondsUntilFits(
  used: number,
  nowMs: number,
  cost: number,
  policy: CreditPolicy,
  oldestFirst: () => Iterable<Charge>,
): number | null {
  if (cost > policy.budget) return null;
  const mustFree = used + cost - policy.budget;
  let freed = 0;
  for (const charge of oldestFirst()) {
    freed += charge.cost;
    if (freed >= mustFree) return Math.ceil((charge.atMs + windowMs(policy) - nowMs) / 1_000);
  }
  return null;
}

function windowMs(policy: CreditPolicy): number {
  return policy.windowSeconds * 1_000;
}
