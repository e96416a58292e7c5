#!/usr/bin/env node
import { COMMANDS, runCli } from "./cli/run-cli.js";

const STOP_SIGNALS = ["SIGTERM", "SIGINT"] as const;

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
// Exit explicitly: after a second stop signal, open connections must not keep the process alive.
process.exit(code);
