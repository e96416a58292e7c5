import { readFileSync } from "node:fs";
import { openStore } from "../access/open-store.js";
import type { AccessStore } from "../access/store.js";
import type { CommandIo } from "./command.js";

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
