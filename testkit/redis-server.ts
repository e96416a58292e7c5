import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { quietLoopbackPort } from "./loopback-ports.js";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A real redis-server on a free loopback port, in its own temp directory, for
 * tests. stop() shuts it down saving its data to that directory and start()
 * brings it back on the same port with the same data, so a test can simulate
 * an outage and a recovery. close() ends it and removes the directory.
 */
export interface RedisServerFixture {
  readonly port: number;
  /** redis://127.0.0.1:<port>/<db> */
  url(db?: number): string;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

const BINARY = process.env.REDIS_SERVER_BINARY ?? "redis-server";

export type RedisAvailability = { readonly available: true } | { readonly available: false; readonly reason: string };

/**
 * Whether redis-server can run here. Where it cannot, tests skip and say why,
 * except under CI (process.env.CI set), where a missing Redis is a failure:
 * CI installs it and must never quietly skip.
 */
export function redisAvailability(): RedisAvailability {
  const probe = spawnSync(BINARY, ["--version"], { encoding: "utf8" });
  if (probe.error === undefined && probe.status === 0) return { available: true };
  const reason = `redis-server is not installed (${probe.error?.message ?? probe.stderr.trim()}); Redis tests are skipped`;
  if (process.env.CI !== undefined && process.env.CI !== "") throw new Error(`${reason}, but CI is set and CI never skips`);
  console.warn(reason);
  return { available: false, reason };
}

export async function startRedisServer(): Promise<RedisServerFixture> {
  const dir = mkdtempSync(join(tmpdir(), "sitediag-redis-"));
  let port = await quietLoopbackPort();
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    if (child !== undefined) return;
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no"];
    const started = spawn(BINARY, args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    started.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    started.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child = started;
    try {
      await waitForPong(port, started, () => output);
    } catch (error) {
      await kill(started);
      child = undefined;
      throw error;
    }
  }

  // The first start may lose its port to another copy of the suite picking the same one at the same moment: pick
  // again. A restart after stop() keeps its port, as a real Redis coming back does.
  for (let attempt = 1; ; attempt += 1) {
    try {
      await start();
      break;
    } catch (error) {
      if (attempt === 3) {
        rmSync(dir, { recursive: true, force: true });
        throw error;
      }
      port = await quietLoopbackPort();
    }
  }

  async function stop(): Promise<void> {
    const running = child;
    if (running === undefined) return;
    child = undefined;
    const exited = exitOf(running);
    // SHUTDOWN SAVE writes the data set to --dir even though periodic saving is off, so start() finds it again.
    await sendCommand(port, "SHUTDOWN SAVE\r\n").catch(() => undefined);
    await Promise.race([exited, delay(5_000).then(() => kill(running))]);
  }

  return {
    port,
    url: (db = 0) => `redis://127.0.0.1:${port}/${db}`,
    start,
    stop,
    close: async () => {
      const running = child;
      child = undefined;
      if (running !== undefined) await kill(running);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Until this very process answers on `port`: another Redis that won the port would answer PING as well. */
async function waitForPong(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${output()}`);
    const reply = await sendCommand(port, "INFO server\r\n").catch(() => "");
    const pid = /process_id:(\d+)/.exec(reply)?.[1];
    if (pid !== undefined && Number(pid) === child.pid) return;
    if (pid !== undefined) throw new Error(`127.0.0.1:${port} is another Redis's (process ${pid})`);
    await delay(50);
  }
  throw new Error(`redis-server did not answer on 127.0.0.1:${port} within 10 s: ${output()}`);
}

/** Sends one inline command and resolves with whatever arrives first (or "" when the server closes). */
function sendCommand(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let reply = "";
    socket.setTimeout(2_000, () => socket.destroy(new Error("redis command timed out")));
    socket.once("connect", () => socket.write(command));
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString();
      socket.end();
    });
    socket.once("error", reject);
    socket.once("close", () => resolve(reply));
  });
}

function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = exitOf(child);
  child.kill("SIGKILL");
  await exited;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
