import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";

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
  Number(process.versions.napi) >= NAPI_OF_BETTER_SQLITE3_13 ? (require("better-sqlite3") as typeof BetterSqlite3) : (require("better-sqlite3-v12") as typeof BetterSqlite3);

export type Database = BetterSqlite3.Database;
