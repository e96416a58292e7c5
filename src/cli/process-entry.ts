/**
 * The `sitediag` bin's process: the CLI with this process's streams, environment and stop signals, and its exit
 * code as the process's. Loaded by src/main.ts once Node's compile cache is on.
 */
import { COMMANDS, exitQuietlyWhenReaderLeaves, runCli } from "./run-cli.js";

const STOP_SIGNALS = ["SIGTERM", "SIGINT"] as const;

exitQuietlyWhenReaderLeaves(process.stdout, process.stderr, (code) => process.exit(code));

const code = await runCli(process.argv.slice(2), COMMANDS, {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  onStopSignal: (listener) => {
    for (const signal of STOP_SIGNALS) process.on(signal, listener);
    return () => {
      for (const signal of STOP_SIGNALS) process.off(signal, listener);
    };
  },
});
// A failed last write reports its error on a later tick: let it be heard (a reader gone is exit 141, not 0).
await new Promise((resolve) => setImmediate(resolve));
// Exit explicitly: after a second stop signal, open connections must not keep the process alive.
process.exit(code);
