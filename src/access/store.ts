import type { ChargeDecision, CreditPolicy, Usage } from "./credit-log.js";

/** What is kept about a key: never the secret, only its digest. Times are epoch milliseconds. */
export interface KeyRecord {
  readonly id: string;
  readonly name: string;
  readonly createdAtMs: number;
  readonly revokedAtMs: number | null;
  /** Credits per window for this key alone; null for the instance's SITEDIAG_CREDIT_BUDGET. */
  readonly budget: number | null;
}

export interface NewKeyRecord {
  readonly id: string;
  readonly name: string;
  readonly digest: string;
  readonly createdAtMs: number;
  /** The key's own budget; absent or null for the instance's. */
  readonly budget?: number | null;
}

/**
 * Names one admitted charge in the store that made it, so exactly that charge
 * can be given back (`refund`). Opaque outside the store.
 */
export interface ChargeReceipt {
  readonly keyId: string;
  readonly charge: string;
}

/** The result of check-and-charge: a key that is unknown or revoked is refused before anything is charged; an admitted charge has its receipt. */
export type ChargeOutcome =
  | { readonly kind: "unauthenticated" }
  | (Extract<ChargeDecision, { kind: "admitted" }> & { readonly keyId: string; readonly receipt: ChargeReceipt })
  | (Extract<ChargeDecision, { kind: "rejected" }> & { readonly keyId: string });

export type RevokeOutcome =
  | { readonly kind: "revoked"; readonly record: KeyRecord }
  | { readonly kind: "already-revoked"; readonly record: KeyRecord }
  | { readonly kind: "not-found" };

/**
 * Keys and the sliding log of their credit charges. Two implementations share
 * this contract (test/access/store-contract.test.ts): SQLite for one host,
 * Redis for any number of instances. Every method rejects with
 * StoreUnavailableError when the store cannot be reached.
 */
export interface AccessStore {
  readonly kind: "sqlite" | "redis";
  /** Stores a new key. With onlyIfEmpty, stores it only when no key exists yet, atomically; returns whether it was stored. */
  insertKey(record: NewKeyRecord, options?: { readonly onlyIfEmpty?: boolean }): Promise<boolean>;
  findKeyByDigest(digest: string): Promise<KeyRecord | undefined>;
  /** All keys, oldest first. */
  listKeys(): Promise<KeyRecord[]>;
  countKeys(): Promise<number>;
  /** Marks a key revoked; the very next charge against it is refused, on every instance. */
  revokeKey(id: string): Promise<RevokeOutcome>;
  /** Gives a key its own budget (null: back to the instance's); the very next charge uses it. Undefined when there is no such key. */
  setKeyBudget(id: string, budget: number | null): Promise<KeyRecord | undefined>;
  /**
   * Atomically: find the active key with this digest, drop its charges older
   * than the window, and record `cost` only if it fits the budget (the key's
   * own when it has one, else the policy's). A refused charge records
   * nothing. The store's own clock decides what "now" is.
   */
  charge(digest: string, cost: number, policy: CreditPolicy): Promise<ChargeOutcome>;
  /**
   * Gives back `credits` of the charge `receipt` names (all of it when they
   * reach its cost), atomically: a call the service could not run for its own
   * reasons (overload) is not paid for. The caller asks once per charge; a
   * charge already given back, or aged out of the window, gives nothing.
   */
  refund(receipt: ChargeReceipt, credits: number): Promise<void>;
  /** The key's standing now (against its own budget when it has one), charging nothing. */
  usage(keyId: string, policy: CreditPolicy): Promise<Usage>;
  /** Resolves when the store answers; for readiness checks. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The store could not be reached or failed to answer; callers fail closed (503), never guess. */
export class StoreUnavailableError extends Error {
  constructor(
    readonly store: "sqlite" | "redis",
    readonly operation: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${store} store unavailable during ${operation}: ${reason}`, options);
    this.name = "StoreUnavailableError";
  }
}
