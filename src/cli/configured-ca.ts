import { readFileSync } from "node:fs";
import type { CommandIo } from "./command.js";
import { messageOf } from "./configured-store.js";

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
