import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { sitediagArgs } from "../fixtures/built-sitediag.js";

/** `sitediag serve` as its own process (this run's build, as `npm start` runs it), so a test can signal or kill it. */
export interface ServeProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** The first key, when the store was empty at start. */
  readonly firstKey: string | undefined;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited(): Promise<number | null>;
}

/**
 * Starts `sitediag serve`; `wrap`, when given, is a command line the node
 * command is appended to and exec'd by (e.g. unshare into a mount namespace).
 */
export async function startServeProcess(env: Readonly<Record<string, string>>, expectFirstKey: boolean, wrap: readonly string[] = []): Promise<ServeProcess> {
  const command = [...wrap, process.execPath, ...sitediagArgs("serve")];
  const child = spawn(command[0] ?? process.execPath, command.slice(1), {
    env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", PORT: "0", SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exit = once(child, "exit").then(([code]) => code as number | null);
  // Bounded by the hook's 60 s, not a guess of how long a start takes: on a busy machine it has taken over 20 s.
  const deadline = Date.now() + 55_000;
  for (;;) {
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    const key = /^\s+(sd_\w+)$/m.exec(err)?.[1];
    if (url !== undefined && (!expectFirstKey || key !== undefined)) {
      return { child, url, firstKey: key, stdout: () => out, stderr: () => err, exited: () => exit };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`sitediag serve did not start: ${out}${err}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
