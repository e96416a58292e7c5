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
