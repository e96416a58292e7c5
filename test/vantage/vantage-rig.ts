import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import type { VantageEntry, VantageFanout, VantageJob, VantageOutcomeOf } from "../../src/vantage/vantage-fanout.js";
import { until } from "../fixtures/until.js";
import { sitediagArgs } from "../fixtures/built-sitediag.js";

// Real `sitediag serve` processes as workers of their vantages, and the
// helpers the vantage tests share.
const ROOT = join(import.meta.dirname, "../..");

export interface ServeProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything it wrote so far, stdout and stderr. */
  output(): string;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
}

/** `sitediag serve` on loopback port 0 with `env` (on top of a bare PATH), once it says it listens. */
export async function startServe(env: Readonly<Record<string, string>>): Promise<ServeProcess> {
  const child = spawn(process.execPath, sitediagArgs("serve"), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "warn", HOST: "127.0.0.1", PORT: "0", SITEDIAG_PROBE_THREADS: "0", SITEDIAG_HOSTS_FILE: "/dev/null", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await until(() => {
    if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}: ${output}`);
    return /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
  }, 30_000);
  return {
    url,
    child,
    output: () => output,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Every entry of one fan-out, in the order they came. */
export async function collect<J extends VantageJob>(fanout: VantageFanout, job: J, vantages: readonly string[], deadline: number): Promise<VantageEntry<VantageOutcomeOf<J>>[]> {
  const entries: VantageEntry<VantageOutcomeOf<J>>[] = [];
  for await (const entry of fanout.run(job, vantages, deadline, undefined)) entries.push(entry);
  return entries;
}

/** Polls an async reading until it gives a value, or fails after `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting`);
    await new Promise((wait) => setTimeout(wait, 50));
  }
}
