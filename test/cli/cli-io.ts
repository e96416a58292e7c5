import { EventEmitter } from "node:events";
import type { Command, CommandIo } from "../../src/cli/command.js";
import { type Environment, loadConfig } from "../../src/config.js";
import type { ProcessIo } from "../../src/cli/run-cli.js";

/** A process stand-in for running the CLI in-process: captured output, an environment, and a stop button. */
export function createCliIo(env: Environment) {
  const out: string[] = [];
  const err: string[] = [];
  const signals = new EventEmitter();
  const io: ProcessIo = {
    stdout: { write: (text: string) => out.push(text) },
    stderr: { write: (text: string) => err.push(text) },
    env,
    onStopSignal: (listener) => {
      signals.on("stop", listener);
      return () => signals.off("stop", listener);
    },
  };
  return {
    io,
    stdout: () => out.join(""),
    stderr: () => err.join(""),
    stop: (signal = "SIGTERM") => signals.emit("stop", signal),
    listeners: () => signals.listenerCount("stop"),
  };
}

export interface DiagnoseRunOptions {
  /** Variables over the caller's base configuration. */
  readonly env?: Record<string, string>;
  readonly tty?: boolean;
  /** The raw environment the colour choice reads (NO_COLOR). */
  readonly colourEnv?: Record<string, string>;
  /** Standard input, for `-` as a file name. */
  readonly stdin?: string;
  /** Called before the command runs, with a button that plays a stop signal (Ctrl-C). */
  readonly onRunning?: (stop: () => void) => void;
}

/** Runs `sitediag check` or `sitediag trace` in-process with captured output and the configuration `base` + `options.env`. */
export async function runDiagnose(command: Pick<Command, "run">, argv: readonly string[], base: Environment, options: DiagnoseRunOptions = {}) {
  let stdout = "";
  let stderr = "";
  const listeners = new Set<(signal: string) => void>();
  const io: CommandIo = {
    stdout: { write: (text: string) => (stdout += text), isTTY: options.tty ?? false },
    stderr: { write: (text: string) => (stderr += text) },
    config: loadConfig({ ...base, ...options.env }),
    env: options.colourEnv ?? {},
    ...(options.stdin === undefined ? {} : { stdin: textStream(options.stdin) }),
    onStopSignal: (listener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
  options.onRunning?.(() => listeners.forEach((listener) => listener("SIGINT")));
  const code = await command.run(argv, io);
  return { code, stdout, stderr, listenersLeft: listeners.size };
}

/** An onRunning that presses stop as soon as the target has seen a request beyond the `seen` it had. */
export function stopOnceRequested(requestCount: () => number): (stop: () => void) => void {
  const seen = requestCount();
  return (stop) => {
    const poll = setInterval(() => {
      if (requestCount() > seen) {
        clearInterval(poll);
        stop();
      }
    }, 10);
  };
}

/** `text` as a literal inside a RegExp. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

async function* textStream(text: string): AsyncGenerator<string> {
  yield text;
}
