import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { decideCharge, expiryHorizonMs, policyForKey, usageOf, type Charge, type CreditPolicy, type WindowState } from "./credit-log.js";
import {
  StoreUnavailableError,
  type AccessStore,
  type ChargeOutcome,
  type ChargeReceipt,
  type KeyRecord,
  type NewKeyRecord,
  type RevokeOutcome,
} from "./store.js";

/**
 * The better-sqlite3 build this Node can run safely.
 *
 * better-sqlite3 13 is a Node-API (N-API 10) addon, shipped prebuilt: one
 * binary for every Node from 22 on. On Node 24 it is the only safe choice:
 * 12.x subclasses node::ObjectWrap, whose Node 24 destructor removes an
 * environment cleanup hook and aborts the process (`Assertion failed:
 * (env) != nullptr` in node::RemoveEnvironmentCleanupHook) when a Statement
 * is garbage-collected with no context entered (WiseLibs/better-sqlite3#1515,
 * closed upstream without a fix in 12.x). Node 20 has only N-API 9, where the
 * 13.x binary crashes on load, so there the same API comes from 12.x,
 * compiled for it at install (npm alias `better-sqlite3-v12`). The two share
 * one API and one file format.
 */
const require = createRequire(import.meta.url);
const NAPI_OF_BETTER_SQLITE3_13 = 10;

export const Database: typeof BetterSqlite3 =
  Number(process.versions.napi) >= NAPI_OF_BETTER_SQLITE3_13
    ? (require("better-sqlite3") as typeof BetterSqlite3)
    : (require("better-sqlite3-v12") as typeof BetterSqlite3);

export type Database = BetterSqlite3.Database;

export interface SqliteStoreOptions {
  /** How long a writer waits for another process's lock before giving up (ms). */
  readonly busyTimeoutMs?: number;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    digest TEXT NOT NULL UNIQUE,
    created_at_ms INTEGER NOT NULL,
    revoked_at_ms INTEGER
  );
  CREATE TABLE IF NOT EXISTS credit_charges (
    key_id TEXT NOT NULL REFERENCES api_keys(id),
    charged_at_ms INTEGER NOT NULL,
    cost INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS credit_charges_by_key ON credit_charges (key_id, charged_at_ms);
  CREATE TABLE IF NOT EXISTS credit_totals (
    key_id TEXT PRIMARY KEY REFERENCES api_keys(id),
    used INTEGER NOT NULL
  ) WITHOUT ROWID;
`;

interface KeyRow {
  id: string;
  name: string;
  created_at_ms: number;
  revoked_at_ms: number | null;
  budget: number | null;
}

interface ChargeRow {
  charged_at_ms: number;
  cost: number;
}

/**
 * Keys and charges in one SQLite file. Several processes (the server and the
 * CLI, or several servers on one host) may share the file: WAL lets readers
 * run beside the writer, and every check-and-charge is a BEGIN IMMEDIATE
 * transaction, so the budget check and the insert see the same log.
 * credit_totals keeps each key's credits in the window beside its log,
 * updated in the same transactions, so a charge never sums the log.
 */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): AccessStore {
  const db = guard("open", () => {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    const opened = new Database(path, { timeout: options.busyTimeoutMs ?? 5_000 });
    opened.pragma("journal_mode = WAL");
    opened.pragma("synchronous = NORMAL");
    opened.pragma("foreign_keys = ON");
    opened.exec(SCHEMA);
    addKeyBudgetColumn(opened);
    return opened;
  });

  const statements = {
    insertKey: db.prepare("INSERT INTO api_keys (id, name, digest, created_at_ms, budget) VALUES (?, ?, ?, ?, ?)"),
    setBudget: db.prepare("UPDATE api_keys SET budget = ? WHERE id = ?"),
    countKeys: db.prepare("SELECT COUNT(*) AS count FROM api_keys").pluck(),
    keyByDigest: db.prepare<[string], KeyRow>("SELECT id, name, created_at_ms, revoked_at_ms, budget FROM api_keys WHERE digest = ?"),
    keyById: db.prepare<[string], KeyRow>("SELECT id, name, created_at_ms, revoked_at_ms, budget FROM api_keys WHERE id = ?"),
    listKeys: db.prepare<[], KeyRow>("SELECT id, name, created_at_ms, revoked_at_ms, budget FROM api_keys ORDER BY created_at_ms, id"),
    revoke: db.prepare("UPDATE api_keys SET revoked_at_ms = ? WHERE id = ? AND revoked_at_ms IS NULL"),
    expiredCredits: db
      .prepare<[string, number], number>("SELECT COALESCE(SUM(cost), 0) FROM credit_charges WHERE key_id = ? AND charged_at_ms <= ?")
      .pluck(),
    prune: db.prepare("DELETE FROM credit_charges WHERE key_id = ? AND charged_at_ms <= ?"),
    loggedCredits: db.prepare<[string], number>("SELECT COALESCE(SUM(cost), 0) FROM credit_charges WHERE key_id = ?").pluck(),
    oldestCharge: db
      .prepare<[string], number>("SELECT charged_at_ms FROM credit_charges WHERE key_id = ? ORDER BY charged_at_ms LIMIT 1")
      .pluck(),
    oldestFirst: db.prepare<[string], ChargeRow>("SELECT charged_at_ms, cost FROM credit_charges WHERE key_id = ? ORDER BY charged_at_ms"),
    insertCharge: db.prepare("INSERT INTO credit_charges (key_id, charged_at_ms, cost) VALUES (?, ?, ?)"),
    total: db.prepare<[string], number>("SELECT used FROM credit_totals WHERE key_id = ?").pluck(),
    setTotal: db.prepare("INSERT INTO credit_totals (key_id, used) VALUES (?, ?) ON CONFLICT (key_id) DO UPDATE SET used = excluded.used"),
    dropTotal: db.prepare("DELETE FROM credit_totals WHERE key_id = ?"),
    // A charge is named by its rowid with its key and time: SQLite reuses a rowid once its row is gone (pruned, given back).
    chargeCost: db
      .prepare<[number, string, number], number>("SELECT cost FROM credit_charges WHERE rowid = ? AND key_id = ? AND charged_at_ms = ?")
      .pluck(),
    setChargeCost: db.prepare("UPDATE credit_charges SET cost = ? WHERE rowid = ?"),
    dropCharge: db.prepare("DELETE FROM credit_charges WHERE rowid = ?"),
  };

  const insertKey = db.transaction((record: NewKeyRecord, onlyIfEmpty: boolean): boolean => {
    if (onlyIfEmpty && Number(statements.countKeys.get()) > 0) return false;
    statements.insertKey.run(record.id, record.name, record.digest, record.createdAtMs, record.budget ?? null);
    return true;
  });

  /**
   * Drops the key's charges that aged out, taking their credits off the
   * running total: each charge is deleted once, so this is amortised O(1)
   * plus index lookups. A key without a total (a file written before totals
   * existed, or a total dropped at zero) has its log counted once instead.
   * Runs inside a write transaction; the caller saves the total.
   */
  function expire(
    keyId: string,
    nowMs: number,
    policy: CreditPolicy,
  ): { readonly state: WindowState; readonly stored: number | undefined } {
    const horizon = expiryHorizonMs(nowMs, policy);
    const stored = statements.total.get(keyId);
    const expired = stored === undefined ? 0 : (statements.expiredCredits.get(keyId, horizon) ?? 0);
    statements.prune.run(keyId, horizon);
    const oldestAtMs = statements.oldestCharge.get(keyId) ?? null;
    // An empty log holds no credits, whatever an old total says.
    if (oldestAtMs === null) return { state: { used: 0, oldestAtMs }, stored };
    const used = stored === undefined ? (statements.loggedCredits.get(keyId) ?? 0) : stored - expired;
    return { state: { used, oldestAtMs }, stored };
  }

  /** A total of zero is dropped rather than stored, so idle keys keep no row; a missing row is recounted from the (empty) log. */
  function saveTotal(keyId: string, stored: number | undefined, used: number): void {
    if (used === stored) return;
    if (used === 0) statements.dropTotal.run(keyId);
    else statements.setTotal.run(keyId, used);
  }

  /** The live log oldest first, read lazily: a refusal stops after the few charges it needs. */
  function* oldestFirst(keyId: string): Generator<Charge> {
    for (const row of statements.oldestFirst.iterate(keyId)) yield { atMs: row.charged_at_ms, cost: row.cost };
  }

  /**
   * One charge of a batch. A key's window is read once per batch and then
   * kept here as its charges are decided, in order: within the transaction
   * nobody else writes, so it stays what the log says until a charge in it
   * ages out, and then it is read again (its total saved first, as `expire`
   * starts from it). Each decision is the one a transaction of its own would
   * make; the statements per charge drop from seven to one.
   */
  const chargeOne = (windows: Map<string, OpenWindow | null>, digest: string, cost: number, policy: CreditPolicy): ChargeOutcome => {
    let window = windows.get(digest);
    if (window === undefined) {
      const key = statements.keyByDigest.get(digest);
      window =
        key === undefined || key.revoked_at_ms !== null
          ? null
          : { keyId: key.id, budget: key.budget, ...expire(key.id, Date.now(), policyForKey(policy, key.budget)) };
      windows.set(digest, window);
    }
    if (window === null) return { kind: "unauthenticated" };
    const { keyId } = window;
    // "now" is read after the write lock is held, so charges from all processes are stamped in lock order.
    const nowMs = Date.now();
    const keyPolicy = policyForKey(policy, window.budget);
    if (window.state.oldestAtMs !== null && window.state.oldestAtMs <= expiryHorizonMs(nowMs, keyPolicy)) {
      saveTotal(keyId, window.stored, window.state.used);
      Object.assign(window, expire(keyId, nowMs, keyPolicy));
    }
    const decision = decideCharge(window.state, nowMs, cost, keyPolicy, () => oldestFirst(keyId));
    if (decision.kind === "rejected") return Object.assign({}, decision, { keyId });
    const { lastInsertRowid } = statements.insertCharge.run(keyId, nowMs, cost);
    window.state = { used: window.state.used + cost, oldestAtMs: window.state.oldestAtMs ?? nowMs };
    return Object.assign({}, decision, { keyId, receipt: { keyId, charge: `${lastInsertRowid}@${nowMs}` } });
  };
  const chargeAll = db.transaction((batch: readonly PendingCharge[]) => {
    const windows = new Map<string, OpenWindow | null>();
    const outcomes = batch.map(({ digest, cost, policy }) => chargeOne(windows, digest, cost, policy));
    for (const window of windows.values()) if (window !== null) saveTotal(window.keyId, window.stored, window.state.used);
    return outcomes;
  });
  const charges = groupCommit((batch) => guard("charge", () => chargeAll.immediate(batch)));

  /**
   * The charge's cost less `credits` (its row gone at zero), and the key's
   * total with it. A charge already pruned (aged out) or given back whole has
   * no row: nothing changes. A missing total is recounted from the log.
   */
  const refund = db.transaction((receipt: ChargeReceipt, credits: number) => {
    const [rowid, atMs] = receipt.charge.split("@", 2).map(Number);
    const cost =
      rowid !== undefined && atMs !== undefined && Number.isSafeInteger(rowid) && Number.isSafeInteger(atMs)
        ? statements.chargeCost.get(rowid, receipt.keyId, atMs)
        : undefined;
    if (cost === undefined) return;
    const back = Math.min(cost, Math.max(0, Math.floor(credits)));
    if (back === 0) return;
    if (back === cost) statements.dropCharge.run(rowid);
    else statements.setChargeCost.run(cost - back, rowid);
    const stored = statements.total.get(receipt.keyId);
    if (stored !== undefined) saveTotal(receipt.keyId, stored, Math.max(0, stored - back));
  });

  const usage = db.transaction((keyId: string, policy: CreditPolicy) => {
    const nowMs = Date.now();
    const keyPolicy = policyForKey(policy, statements.keyById.get(keyId)?.budget ?? null);
    const { state, stored } = expire(keyId, nowMs, keyPolicy);
    saveTotal(keyId, stored, state.used);
    return usageOf(state, nowMs, keyPolicy);
  });

  const setBudget = db.transaction((id: string, budget: number | null): KeyRecord | undefined => {
    if (statements.setBudget.run(budget, id).changes === 0) return undefined;
    const row = statements.keyById.get(id);
    return row === undefined ? undefined : toRecord(row);
  });

  const revoke = db.transaction((id: string): RevokeOutcome => {
    const before = statements.keyById.get(id);
    if (before === undefined) return { kind: "not-found" };
    if (before.revoked_at_ms !== null) return { kind: "already-revoked", record: toRecord(before) };
    statements.revoke.run(Date.now(), id);
    const after = statements.keyById.get(id);
    return after === undefined ? { kind: "not-found" } : { kind: "revoked", record: toRecord(after) };
  });

  return {
    kind: "sqlite",
    insertKey: async (record, insertOptions) => guard("insertKey", () => insertKey.immediate(record, insertOptions?.onlyIfEmpty === true)),
    findKeyByDigest: async (digest) =>
      guard("findKeyByDigest", () => {
        const row = statements.keyByDigest.get(digest);
        return row === undefined ? undefined : toRecord(row);
      }),
    listKeys: async () => guard("listKeys", () => statements.listKeys.all().map(toRecord)),
    countKeys: async () => guard("countKeys", () => Number(statements.countKeys.get())),
    revokeKey: async (id) => guard("revokeKey", () => revoke.immediate(id)),
    setKeyBudget: async (id, budget) => guard("setKeyBudget", () => setBudget.immediate(id, budget)),
    charge: (digest, cost, policy) => charges.add({ digest, cost, policy }),
    refund: async (receipt, credits) => guard("refund", () => refund.immediate(receipt, credits)),
    usage: async (keyId, policy) => guard("usage", () => usage.immediate(keyId, policy)),
    ping: async () => guard("ping", () => void db.prepare("SELECT 1").get()),
    close: async () => {
      if (db.open) db.close();
    },
  };
}

/** A key's credit window while a batch of charges is decided. */
interface OpenWindow {
  readonly keyId: string;
  readonly budget: number | null;
  state: WindowState;
  /** The total as stored before this batch (or its last re-read). */
  stored: number | undefined;
}

interface PendingCharge {
  readonly digest: string;
  readonly cost: number;
  readonly policy: CreditPolicy;
}

/**
 * The most charges one transaction holds. A burst of a thousand calls
 * arrives in one turn of the loop, whose intake lasts hundreds of
 * milliseconds on a loaded machine; charged in one transaction at its end,
 * no check could start before the last call was taken in. 64 a transaction
 * keeps nearly all of group commit's saving (figures: docs/benchmarks.md).
 */
const MAX_GROUP_COMMIT = 64;

/**
 * Group commit: every charge asked for in one turn of the event loop goes
 * into one write transaction, decided one after another in the order they
 * were asked, exactly as separate transactions would decide them. A
 * transaction costs a lock, a WAL append and its bookkeeping whatever it
 * holds, and was most of a charge's price when each had its own. Should the
 * transaction fail, it is rolled back whole and every charge in it rejects.
 */
function groupCommit(commit: (batch: readonly PendingCharge[]) => ChargeOutcome[]): { add(charge: PendingCharge): Promise<ChargeOutcome> } {
  let queue: { readonly charge: PendingCharge; resolve(outcome: ChargeOutcome): void; reject(error: unknown): void }[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    let outcomes: ChargeOutcome[];
    try {
      outcomes = commit(batch.map((entry) => entry.charge));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    batch.forEach((entry, index) => {
      const outcome = outcomes[index];
      if (outcome === undefined) entry.reject(new Error("group commit lost a charge"));
      else entry.resolve(outcome);
    });
  };
  return {
    add: (charge) =>
      new Promise((resolve, reject) => {
        // After this turn's I/O callbacks: every request that arrived with this one is in the batch,
        // up to MAX_GROUP_COMMIT: a burst is charged (and goes on to its probe) in groups while the rest is taken in.
        queue.push({ charge, resolve, reject });
        if (queue.length >= MAX_GROUP_COMMIT) flush();
        else if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      }),
  };
}

function toRecord(row: KeyRow): KeyRecord {
  return { id: row.id, name: row.name, createdAtMs: row.created_at_ms, revokedAtMs: row.revoked_at_ms, budget: row.budget };
}

/** Files made before keys had budgets of their own get the column (NULL: the instance's budget), once. */
function addKeyBudgetColumn(db: Database): void {
  const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('api_keys')").all();
  if (columns.some((column) => column.name === "budget")) return;
  try {
    db.exec("ALTER TABLE api_keys ADD COLUMN budget INTEGER");
  } catch (error) {
    // Another process sharing the file added it between our look and our change.
    if (!(error instanceof Error && /duplicate column/i.test(error.message))) throw error;
  }
}

function guard<T>(operation: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new StoreUnavailableError("sqlite", operation, reason, { cause: error });
  }
}
