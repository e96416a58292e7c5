import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { decideCharge, summarize, type Charge, type CreditPolicy } from "./credit-log.js";
import { StoreUnavailableError, type AccessStore, type ChargeOutcome, type KeyRecord, type NewKeyRecord, type RevokeOutcome } from "./store.js";

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
`;

interface KeyRow {
  id: string;
  name: string;
  created_at_ms: number;
  revoked_at_ms: number | null;
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
 */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): AccessStore {
  const db = guard("open", () => {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    const opened = new Database(path, { timeout: options.busyTimeoutMs ?? 5_000 });
    opened.pragma("journal_mode = WAL");
    opened.pragma("synchronous = NORMAL");
    opened.pragma("foreign_keys = ON");
    opened.exec(SCHEMA);
    return opened;
  });

  const statements = {
    insertKey: db.prepare("INSERT INTO api_keys (id, name, digest, created_at_ms) VALUES (?, ?, ?, ?)"),
    countKeys: db.prepare("SELECT COUNT(*) AS count FROM api_keys").pluck(),
    keyByDigest: db.prepare<[string], KeyRow>("SELECT id, name, created_at_ms, revoked_at_ms FROM api_keys WHERE digest = ?"),
    keyById: db.prepare<[string], KeyRow>("SELECT id, name, created_at_ms, revoked_at_ms FROM api_keys WHERE id = ?"),
    listKeys: db.prepare<[], KeyRow>("SELECT id, name, created_at_ms, revoked_at_ms FROM api_keys ORDER BY created_at_ms, id"),
    revoke: db.prepare("UPDATE api_keys SET revoked_at_ms = ? WHERE id = ? AND revoked_at_ms IS NULL"),
    prune: db.prepare("DELETE FROM credit_charges WHERE key_id = ? AND charged_at_ms <= ?"),
    charges: db.prepare<[string, number], ChargeRow>(
      "SELECT charged_at_ms, cost FROM credit_charges WHERE key_id = ? AND charged_at_ms > ? ORDER BY charged_at_ms",
    ),
    insertCharge: db.prepare("INSERT INTO credit_charges (key_id, charged_at_ms, cost) VALUES (?, ?, ?)"),
  };

  const insertKey = db.transaction((record: NewKeyRecord, onlyIfEmpty: boolean): boolean => {
    if (onlyIfEmpty && Number(statements.countKeys.get()) > 0) return false;
    statements.insertKey.run(record.id, record.name, record.digest, record.createdAtMs);
    return true;
  });

  const charge = db.transaction((digest: string, cost: number, policy: CreditPolicy): ChargeOutcome => {
    const key = statements.keyByDigest.get(digest);
    if (key === undefined || key.revoked_at_ms !== null) return { kind: "unauthenticated" };
    // "now" is read after the write lock is held, so charges from all processes are stamped in lock order.
    const nowMs = Date.now();
    const horizon = nowMs - policy.windowSeconds * 1_000;
    statements.prune.run(key.id, horizon);
    const decision = decideCharge(toCharges(statements.charges.all(key.id, horizon)), nowMs, cost, policy);
    if (decision.kind === "admitted") statements.insertCharge.run(key.id, nowMs, cost);
    return { ...decision, keyId: key.id };
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
    charge: async (digest, cost, policy) => guard("charge", () => charge.immediate(digest, cost, policy)),
    usage: async (keyId, policy) =>
      guard("usage", () => {
        const nowMs = Date.now();
        return summarize(toCharges(statements.charges.all(keyId, nowMs - policy.windowSeconds * 1_000)), nowMs, policy);
      }),
    ping: async () => guard("ping", () => void db.prepare("SELECT 1").get()),
    close: async () => {
      if (db.open) db.close();
    },
  };
}

function toRecord(row: KeyRow): KeyRecord {
  return { id: row.id, name: row.name, createdAtMs: row.created_at_ms, revokedAtMs: row.revoked_at_ms };
}

function toCharges(rows: readonly ChargeRow[]): Charge[] {
  return rows.map((row) => ({ atMs: row.charged_at_ms, cost: row.cost }));
}

function guard<T>(operation: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new StoreUnavailableError("sqlite", operation, reason, { cause: error });
  }
}
