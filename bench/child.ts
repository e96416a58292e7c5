import { type ChildProcess, spawn, type SpawnOptions } from "node:child_process";
import { once } from "node:events";

/** A process the bench started, with its captured stderr for when it fails. */
export interface BenchChild {
  readonly process: ChildProcess;
  readonly pid: number;
  stderr(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

export function startChild(command: string, args: readonly string[], options: SpawnOptions = {}): BenchChild {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...options });
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  let errors = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    // Keep the tail only: a chatty process must not grow the bench's own memory.
    errors = (errors + chunk.toString()).slice(-8_192);
  });
  return {
    process: child,
    pid: child.pid,
    stderr: () => errors,
    stop: async (graceMs = 5_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The first line the child writes on stdout, or a failure naming what it wrote on stderr. */
export function firstLine(child: BenchChild, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    const timer = setTimeout(() => reject(new Error(`no output within ${timeoutMs} ms: ${child.stderr()}`)), timeoutMs);
    child.process.stdout?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const end = buffered.indexOf("\n");
      if (end < 0) return;
      clearTimeout(timer);
      resolve(buffered.slice(0, end));
    });
    child.process.once("exit", (code) => reject(new Error(`exited with ${code} before writing a line: ${child.stderr()}`)));
  });
}

/** Polls `url` until it answers 200, or fails after `timeoutMs` naming the child's stderr. */
export async function waitForOk(url: string, child: BenchChild, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null) throw new Error(`${url}: process exited with ${child.process.exitCode}: ${child.stderr()}`);
    const status = await fetch(url).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms: ${child.stderr()}`);
}
