import type { Writable } from "node:stream";
import { ConfigError, type Environment, loadConfig } from "../config.js";
import { VERSION } from "../package-info.js";
import { closest } from "./arguments.js";
import { type Command, type CommandIo, EXIT_OK, EXIT_USAGE } from "./command.js";
import { COMMAND_NAMES } from "./command-names.js";

/**
 * Every subcommand of the `sitediag` bin, in the order `sitediag --help` lists them, each loading its code only
 * when it runs: `sitediag keys` need not load the server and the probe, nor `check` the server. Measured on
 * Node 20 (CPU-seconds of a start, the least of five): `--help` 0.56 -> 0.08, `keys --help` 0.65 -> 0.12,
 * `check --help` 0.55 -> 0.43, `trace --help` 0.51 -> 0.41. Add new ones here and in command-names.ts.
 */
export const COMMANDS: readonly Command[] = [
  loadedWhenRun(COMMAND_NAMES.serve, async () => (await import("./serve.js")).serveCommand),
  loadedWhenRun(COMMAND_NAMES.keys, async () => (await import("./keys.js")).keysCommand),
  loadedWhenRun(COMMAND_NAMES.check, async () => (await import("./check.js")).checkCommand),
  loadedWhenRun(COMMAND_NAMES.trace, async () => (await import("./trace.js")).traceCommand),
  loadedWhenRun(COMMAND_NAMES.vantages, async () => (await import("./vantages.js")).vantagesCommand),
];

function loadedWhenRun(names: { readonly name: string; readonly summary: string }, load: () => Promise<Command>): Command {
  return { name: names.name, summary: names.summary, run: async (argv, io) => (await load()).run(argv, io) };
}

/** What the process offers the CLI; CommandIo minus the configuration, which runCli loads. */
export type ProcessIo = Omit<CommandIo, "config" | "env"> & { readonly env: Environment };

/**
 * `sitediag <command> [args]`: finds the command, loads the configuration
 * from the environment once (a bad value stops here with the variable's name
 * and exit code 2), and runs it. Help and version need no configuration.
 */
export async function runCli(argv: readonly string[], commands: readonly Command[], io: ProcessIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    (name === undefined ? io.stderr : io.stdout).write(usage(commands));
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (name === "--version" || name === "-v") {
    io.stdout.write(`${VERSION}\n`);
    return EXIT_OK;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (command === undefined) {
    const near = closest(
      name,
      commands.map((candidate) => candidate.name),
    );
    const shown = JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}...` : name);
    io.stderr.write(
      `sitediag: unknown command ${shown}${near === undefined ? "" : ` (did you mean ${near}?)`}\nRun "sitediag --help" for every command.\n`,
    );
    return EXIT_USAGE;
  }
  let config;
  try {
    config = loadConfig(io.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr.write(`sitediag: configuration error in ${error.variable}: ${error.problem}\n`);
    return EXIT_USAGE;
  }
  return command.run(rest, {
    stdout: io.stdout,
    stderr: io.stderr,
    onStopSignal: io.onStopSignal,
    env: io.env,
    config,
    ...(io.stdin === undefined ? {} : { stdin: io.stdin }),
  });
}

/** What the commands also do, which their one-line summaries cannot say: each has its own --help. */
const MORE = `also:
  sitediag trace --batch FILE [--csv]    trace every row of a CSV (url[,expected final URL]):
                                         a migration audit, PASS/FAIL per row (--max-redirects N,
                                         --rerun-failed)
  sitediag check --vantages all URL      check (or trace) from every vantage (region) there is
  sitediag <command> --help              every option of a command
`;

function usage(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  const lines = commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
  return `sitediag ${VERSION}: is this site up, and where does this URL redirect?\n\nusage: sitediag <command> [options]\n\ncommands:\n${lines.join("\n")}\n\n${MORE}\nConfiguration comes from environment variables (see README).\n`;
}

/** 128 + SIGPIPE, as shells report a tool whose reader went away (`yes | head`). */
export const EXIT_READER_GONE = 141;

/**
 * A reader that stops early (`| head -3`) closes our stdout, and the next
 * write fails with EPIPE. Unix tools die quietly of SIGPIPE then; Node
 * ignores the signal and throws the write's error instead, with a stack. So
 * the process leaves as they do: nothing said, exit 141, for every command at
 * once (no write site need know). A closed stderr is ignored: there is no one
 * left to tell. Any other write error stays as loud as before.
 */
export function exitQuietlyWhenReaderLeaves(stdout: Writable, stderr: Writable, exit: (code: number) => void): void {
  stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    exit(EXIT_READER_GONE);
  });
  stderr.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
}
