import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { until } from "../fixtures/until.js";
import { sitediagArgs } from "../fixtures/built-sitediag.js";

const ROOT = join(import.meta.dirname, "..", "..");

/** One GET on a connection of its own, so node:cluster hands each call to the next worker. */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        response.on("error", reject);
      })
      .on("error", reject);
  });
}

interface Cluster {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
}

function startCluster(env: Record<string, string>): Cluster {
  const out: string[] = [];
  const err: string[] = [];
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("SITEDIAG_")));
  const child = spawn(process.execPath, sitediagArgs("serve"), {
    cwd: ROOT,
    env: { ...inherited, HOST: "127.0.0.1", PORT: "0", SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (chunk: Buffer) => out.push(chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => err.push(chunk.toString("utf8")));
  const exited = once(child, "exit").then(([code]) => code as number | null);
  return { child, exited, stdout: () => out.join(""), stderr: () => err.join("") };
}

/** pids of the processes that logged a CheckSite call, from the JSON request lines. */
function callPids(stdout: string): Set<number> {
  const pids = new Set<number>();
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    const entry = JSON.parse(line) as { msg?: string; operation?: string; pid?: number };
    if (entry.msg === "request" && entry.operation === "CheckSite" && typeof entry.pid === "number") pids.add(entry.pid);
  }
  return pids;
}

async function createKey(storePath: string): Promise<string> {
  const child = spawn(process.execPath, sitediagArgs("keys", "create", "--name", "second"), {
    cwd: ROOT,
    env: { ...process.env, SITEDIAG_STORE: `sqlite:${storePath}` },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const out: string[] = [];
  child.stdout?.on("data", (chunk: Buffer) => out.push(chunk.toString("utf8")));
  const [code] = await once(child, "exit");
  expect(code).toBe(0);
  return out.join("").trim();
}

function metricValue(exposition: string, series: string): number | undefined {
  const line = exposition.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("SITEDIAG_WORKERS", () => {
  it("is 1 by default, accepts 1..64 and auto, and names itself when wrong", () => {
    expect(loadConfig({}).workers).toBe(1);
    expect(loadConfig({ SITEDIAG_WORKERS: "4" }).workers).toBe(4);
    expect(loadConfig({ SITEDIAG_WORKERS: "auto" }).workers).toBe(Math.min(availableParallelism(), 64));
    expect(() => loadConfig({ SITEDIAG_WORKERS: "0" })).toThrow(/SITEDIAG_WORKERS/);
    expect(() => loadConfig({ SITEDIAG_WORKERS: "65" })).toThrow(/SITEDIAG_WORKERS/);
    expect(() => loadConfig({ SITEDIAG_WORKERS: "many" })).toThrow(/SITEDIAG_WORKERS.*auto/);
  });
});

/**
 * A primary and two workers, each loading the built JavaScript with a probe thread of its own, boot in a few
 * seconds alone and in well over 20 on a machine running another test suite beside this one (CI's Node lines).
 */
const BOOT_MS = 90_000;

describe("sitediag serve with SITEDIAG_WORKERS=2", { timeout: 2 * BOOT_MS }, () => {
  let dir: string;
  let targets: HttpTargets;
  let cluster: Cluster;
  let url: string;
  let key: string;
  let workerPids: number[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sitediag-cluster-"));
    targets = await startHttpTargets({
      routes: { "/up": { kind: "respond", status: 200 }, "/slow": { kind: "respond", status: 200, delayMs: 1_500 } },
    });
    cluster = startCluster({ SITEDIAG_WORKERS: "2", SITEDIAG_STORE: `sqlite:${join(dir, "cluster.db")}`, SITEDIAG_CREDIT_BUDGET: "20" });
    const listening = await until(
      () => /listening on (http:\/\/127\.0\.0\.1:\d+) .*2 workers: (\d+), (\d+)\)/.exec(cluster.stdout()) ?? undefined,
      BOOT_MS,
    );
    url = listening[1] ?? "";
    workerPids = [Number(listening[2]), Number(listening[3])];
    key = await until(() => /^\s+(sd_\w+)$/m.exec(cluster.stderr())?.[1]);
  }, 2 * BOOT_MS);
  afterAll(async () => {
    if (cluster.child.exitCode === null && cluster.child.signalCode === null) {
      cluster.child.kill("SIGKILL");
      await cluster.exited;
    }
    await targets?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("announces the service and the first key once, from the primary", () => {
    expect(cluster.stdout().match(/listening on http/g)).toHaveLength(1);
    expect(cluster.stderr().match(/^\s+sd_\w+$/gm)).toHaveLength(1);
    // The key goes to the person at the terminal, never into the log stream.
    expect(cluster.stdout()).not.toMatch(/sd_\w{28}/);
    expect(new Set(workerPids).size).toBe(2);
    expect(workerPids).not.toContain(cluster.child.pid);
  });

  it("answers from both workers and admits exactly one budget across them", async () => {
    const check = `${url}/api/v1/is-site-down?url=${encodeURIComponent(targets.url("/up"))}`;
    const answers = await Promise.all(Array.from({ length: 30 }, () => get(check, { "x-api-key": key })));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
    await until(() => (callPids(cluster.stdout()).size === 2 ? true : undefined), 20_000);
    expect([...callPids(cluster.stdout())].sort()).toEqual([...workerPids].sort());
  });

  it("reports the sum over all workers on /metrics, whichever worker is asked", async () => {
    for (let scrape = 0; scrape < 4; scrape++) {
      const { status, body } = await get(`${url}/metrics`);
      expect(status).toBe(200);
      expect(metricValue(body, 'sitediag_credit_charges_total{decision="admitted"}')).toBe(10);
      expect(metricValue(body, 'sitediag_credit_charges_total{decision="rejected"}')).toBe(20);
      expect(metricValue(body, "sitediag_credits_charged_total")).toBe(20);
    }
  });

  it("replaces a worker that dies", async () => {
    const [victim, survivor] = workerPids as [number, number];
    process.kill(victim, "SIGKILL");
    const successor = Number(await until(() => new RegExp(`worker (\\d+) replaced worker ${victim}`).exec(cluster.stderr())?.[1], BOOT_MS));
    expect(cluster.stderr()).toContain(`worker ${victim} died (signal SIGKILL)`);
    expect(successor).not.toBe(victim);
    expect(() => process.kill(successor, 0)).not.toThrow();
    const before = cluster.stdout().length;
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => get(`${url}/api/v1/is-site-down?url=${encodeURIComponent(targets.url("/up"))}`)),
    );
    // No key: each call is answered 401, by a live worker.
    expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401, 401, 401, 401]);
    await until(() => (callPids(cluster.stdout().slice(before)).size === 2 ? true : undefined), 20_000);
    expect([...callPids(cluster.stdout().slice(before))].sort()).toEqual([successor, survivor].sort());
    workerPids = [survivor, successor];
  });

  it("on SIGTERM finishes the check in flight, stops every worker and exits 0", async () => {
    // The first key's budget is spent; a second key, made as an operator would, pays for this call.
    const second = await createKey(join(dir, "cluster.db"));
    const inFlight = get(`${url}/api/v1/is-site-down?url=${encodeURIComponent(targets.url("/slow"))}`, { "x-api-key": second });
    await until(() => (targets.requests.some((request) => request.target === "/slow") ? true : undefined));
    cluster.child.kill("SIGTERM");
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(await cluster.exited).toBe(0);
    expect(cluster.stderr()).toContain("SIGTERM received, finishing open requests in 2 workers");
    for (const pid of workerPids) expect(() => process.kill(pid, 0)).toThrow();
  });
});

describe("sitediag serve with SITEDIAG_WORKERS=2, stopped twice", { timeout: 2 * BOOT_MS }, () => {
  let dir: string;
  let targets: HttpTargets;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sitediag-cluster-"));
    targets = await startHttpTargets({ routes: { "/slow": { kind: "respond", status: 200, delayMs: 3_000 } } });
  });
  afterAll(async () => {
    await targets?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("kills the workers and exits 1 at once on a second signal", async () => {
    const cluster = startCluster({ SITEDIAG_WORKERS: "2", SITEDIAG_STORE: `sqlite:${join(dir, "twice.db")}` });
    const listening = await until(
      () => /listening on (http:\/\/127\.0\.0\.1:\d+) .*2 workers: (\d+), (\d+)\)/.exec(cluster.stdout()) ?? undefined,
      BOOT_MS,
    );
    const key = await until(() => /^\s+(sd_\w+)$/m.exec(cluster.stderr())?.[1]);
    const inFlight = get(`${listening[1] ?? ""}/api/v1/is-site-down?url=${encodeURIComponent(targets.url("/slow"))}`, {
      "x-api-key": key,
    }).catch((error: unknown) => error);
    await until(() => (targets.requests.some((request) => request.target === "/slow") ? true : undefined));
    cluster.child.kill("SIGTERM");
    await until(() => (cluster.stderr().includes("finishing open requests in 2 workers") ? true : undefined));
    cluster.child.kill("SIGINT");
    expect(await cluster.exited).toBe(1);
    expect(cluster.stderr()).toContain("SIGINT again, stopping now");
    // Killed, not drained: the call in flight loses its connection.
    expect(await inFlight).toBeInstanceOf(Error);
    for (const pid of [Number(listening[2]), Number(listening[3])]) {
      await until(() => {
        try {
          process.kill(pid, 0);
          return undefined;
        } catch {
          return true;
        }
      }, 5_000);
    }
  });
});
