import { readFileSync } from "node:fs";
import { basename, isAbsolute, relative } from "node:path";
import { openStore } from "../access/open-store.js";
import type { AccessStore } from "../access/store.js";
import type { Config, Environment } from "../config.js";

/** Somewhere to write text: process.stdout, process.stderr, or a test's buffer. */
export interface TextWriter {
  write(text: string): unknown;
  /** True when a person is reading (colours, tables); absent means no. */
  readonly isTTY?: boolean;
  /** A terminal's width in characters, when it is one. */
  readonly columns?: number;
}

/** What a subcommand gets from the process, so tests can run it in-process. */
export interface CommandIo {
  readonly stdout: TextWriter;
  readonly stderr: TextWriter;
  /** The environment's configuration, already parsed and validated. */
  readonly config: Config;
  /** The raw environment, for what is not configuration (NO_COLOR, FORCE_COLOR). */
  readonly env?: Environment;
  /** Standard input, for commands that read a file given as "-". */
  readonly stdin?: AsyncIterable<string | Buffer>;
  /**
   * Subscribes to requests to stop (SIGTERM, SIGINT); returns the
   * unsubscribe. Long-running commands (serve) use it; others ignore it.
   */
  onStopSignal(listener: (signal: string) => void): () => void;
}

/**
 * One `sitediag <name>` subcommand. `run` resolves with the exit code:
 * 0 done, 1 could not be done, 2 the command line or configuration was wrong.
 */
export interface Command {
  readonly name: string;
  /** One line for `sitediag --help`. */
  readonly summary: string;
  run(argv: readonly string[], io: CommandIo): Promise<number>;
}

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

// What the configuration names, opened for a command; a failure is said on stderr, for a person.

/**
 * The PEM text of SITEDIAG_CA_FILE: undefined when unset, false when it
 * cannot be read (said on stderr, after `prefix`).
 */
export function readConfiguredCa(io: CommandIo, prefix = ""): string | undefined | false {
  if (io.config.caFile === undefined) return undefined;
  try {
    return readFileSync(io.config.caFile, "utf8");
  } catch (error) {
    io.stderr.write(`${prefix}configuration error in SITEDIAG_CA_FILE: cannot read ${io.config.caFile}: ${messageOf(error)}\n`);
    return false;
  }
}

/** Opens the store SITEDIAG_STORE names, or says on stderr why it cannot (undefined then). */
export async function openConfiguredStore(io: CommandIo): Promise<AccessStore | undefined> {
  try {
    return await openStore(io.config.store);
  } catch (error) {
    io.stderr.write(`sitediag: cannot open the store named by SITEDIAG_STORE: ${messageOf(error)}\n`);
    return undefined;
  }
}

/** The message of anything thrown, for a line on stderr. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * How to run this CLI again, as a person can paste it where they started it:
 * `sitediag` through the installed bin; otherwise node with this process's
 * flags and script, relative to the working directory when it lies below it
 * (`node dist/bin/sitediag.js` in a clone after `npm start`'s build), so a hint
 * that names a command never names one that is not on PATH.
 */
export function selfCommand(script = process.argv[1], execArgv: readonly string[] = process.execArgv, cwd = process.cwd()): string {
  if (script === undefined || basename(script) === "sitediag") return "sitediag";
  const below = relative(cwd, script);
  const path = below === "" || below.startsWith("..") || isAbsolute(below) ? script : below;
  return ["node", ...execArgv, path].map(shellWord).join(" ");
}

/** A word a POSIX shell reads back unchanged: as it is when it is plain, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
