import { checkCommand } from "./check.js";
import type { Command } from "./command.js";
import { keysCommand } from "./keys.js";
import { serveCommand } from "./serve.js";
import { traceCommand } from "./trace.js";

/** Every subcommand of the `sitediag` bin, in the order `sitediag --help` lists them. Add new ones here. */
export const COMMANDS: readonly Command[] = [serveCommand, keysCommand, checkCommand, traceCommand];
