import { EventEmitter } from "node:events";
import type { Environment } from "../../src/config.js";
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
