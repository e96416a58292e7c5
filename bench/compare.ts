/**
 * `npm run bench:compare`: two sitediag services, A and B, under one load,
 * side by side. Short wrk runs alternate between them (A, B, A, B ...), each
 * charged with its own process tree's CPU, so the machine's drift falls on
 * both alike. On the 2-vCPU machines this project is measured on, the same
 * build measured twice in a row differs by far more than a change worth a
 * few percent (docs/benchmarks.md), which shows only in the ratio of neighbouring runs. Each run also
 * reports the service's main thread alone (/proc/PID/task/PID/stat): a change to the REST door, the
 * charge or the answer moves that figure by a larger share than the whole tree's. Everything on
 * loopback; never part of `npm test`.
 *
 *   COMPARE_PATH            the target's path (default /ok; /r/1 is 4 redirects)
 *   COMPARE_TOOL            is-site-down (default) or redirect-check
 *   COMPARE_LEAF            ecdsa or rsa: the target over HTTPS with that leaf, its CA trusted through NODE_EXTRA_CA_CERTS
 *   COMPARE_PAIRS           runs of each (default 12), after one warm-up run each
 *   COMPARE_SECONDS         seconds per run (default 3)
 *   COMPARE_CONCURRENCY     wrk connections (default 50)
 *   COMPARE_DETAILS         1: ask with details=true (every request's timings, TLS and the whole chain)
 *   COMPARE_A_MAIN, _B_MAIN a built dist/bin/sitediag.js (another checkout's; dist/src/main.js before the bundle); this tree's when unset
 *   COMPARE_A_NODE_ARGS, _B_ node flags, space-separated
 *   COMPARE_A_ENV, _B_      the service's environment on top of the bench's, "NAME=value NAME=value"
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processTreeCpuMicros, threadCpuMicros } from "./process-cpu.js";
import { type ServiceProcess, startService } from "./service-process.js";
import { type LeafKind, makeBenchPki } from "./https-pki.js";
import { startTarget, targetPorts } from "./stack.js";
import { median, round } from "./stats.js";
import { runWrk, wrkAvailable } from "./wrk.js";

interface Side {
  readonly name: "A" | "B";
  readonly main: string | undefined;
  readonly nodeArgs: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

interface Run {
  readonly cpuPerCheckUs: number;
  /** The service's main thread alone (the REST door, the key, the charge, the answer): most of what sitediag adds to a check. */
  readonly mainThreadUs: number;
  readonly perSecond: number;
}

const env = process.env;
const tool = env.COMPARE_TOOL ?? "is-site-down";
if (tool !== "is-site-down" && tool !== "redirect-check")
  throw new Error(`COMPARE_TOOL must be is-site-down or redirect-check, got "${tool}"`);
const path = env.COMPARE_PATH ?? "/ok";
const leaf = env.COMPARE_LEAF === undefined || env.COMPARE_LEAF === "" ? null : env.COMPARE_LEAF;
if (leaf !== null && leaf !== "ecdsa" && leaf !== "rsa") throw new Error(`COMPARE_LEAF must be ecdsa or rsa, got "${leaf}"`);
const pairs = whole("COMPARE_PAIRS", 12);
const seconds = whole("COMPARE_SECONDS", 3);
const connections = whole("COMPARE_CONCURRENCY", 50);
const details = env.COMPARE_DETAILS === "1" ? "&details=true" : "";
const sides: readonly Side[] = (["A", "B"] as const).map((name) => ({
  name,
  main: env[`COMPARE_${name}_MAIN`] || undefined,
  nodeArgs: words(env[`COMPARE_${name}_NODE_ARGS`]),
  env: Object.fromEntries(words(env[`COMPARE_${name}_ENV`]).map(assignment)),
}));

if (!(await wrkAvailable())) {
  console.error("bench:compare: wrk is not installed (apt-get install wrk)");
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), "sitediag-compare-"));
const pki = await makeBenchPki(dir);
const target = startTarget(pki);
const services: ServiceProcess[] = [];
try {
  const ports = await targetPorts(target);
  const tlsPort = leaf === null ? null : (ports.https?.[leaf satisfies LeafKind] ?? null);
  const trust: Record<string, string> = leaf === null ? {} : { NODE_EXTRA_CA_CERTS: pki.caFile };
  for (const side of sides) {
    services.push(
      await startService({
        store: `sqlite:${join(dir, `${side.name}.db`)}`,
        tracePort: tlsPort ?? ports.http,
        main: side.main,
        nodeArgs: side.nodeArgs,
        extraEnv: { ...trust, ...side.env },
      }),
    );
  }
  const targetUrl = encodeURIComponent(tlsPort === null ? `http://127.0.0.1:${ports.http}${path}` : `https://127.0.0.1:${tlsPort}${path}`);
  const measure = async (service: ServiceProcess, durationSeconds: number): Promise<Run> => {
    const pid = service.child.pid;
    const before = processTreeCpuMicros(pid);
    const mainBefore = threadCpuMicros(pid).get(pid) ?? 0;
    const result = await runWrk({
      url: `${service.url}/api/v1/${tool}?url=${targetUrl}${details}`,
      headers: { "x-api-key": service.apiKey },
      connections,
      durationSeconds,
    });
    const cpu = processTreeCpuMicros(pid) - before;
    const mainThread = (threadCpuMicros(pid).get(pid) ?? 0) - mainBefore;
    // A loaded machine makes a service answer a few checks with its overload 503; past 1% a run is no measurement.
    if (result.requests === 0 || result.errors > result.requests / 100)
      throw new Error(`${service.url}: ${result.errors} errors in ${result.requests} requests`);
    if (result.errors > 0) console.log(`  (${service.url}: ${result.errors} errors or non-2xx answers in ${result.requests} requests)`);
    return { cpuPerCheckUs: cpu / result.requests, mainThreadUs: mainThread / result.requests, perSecond: result.perSecond };
  };

  console.log(
    `bench:compare: ${tool}${details === "" ? "" : " with details"} ${leaf === null ? "http" : `https (${leaf})`} ${path}, ${pairs} pairs of ${seconds} s runs at -c${connections}`,
  );
  for (const side of sides)
    console.log(
      `  ${side.name}: ${side.main ?? "this tree"} ${side.nodeArgs.join(" ")} ${Object.entries(side.env)
        .map(([name, value]) => `${name}=${value}`)
        .join(" ")}`,
    );
  for (const service of services) await measure(service, seconds);
  const runs: [Run, Run][] = [];
  for (let pair = 0; pair < pairs; pair++) {
    const [a, b] = services;
    if (a === undefined || b === undefined) throw new Error("two services were to be started");
    const runA = await measure(a, seconds);
    const runB = await measure(b, seconds);
    runs.push([runA, runB]);
    console.log(
      `  pair ${String(pair + 1).padStart(2)}: A ${runA.cpuPerCheckUs.toFixed(0)} us/check (main ${runA.mainThreadUs.toFixed(0)}) ${runA.perSecond.toFixed(0)}/s   B ${runB.cpuPerCheckUs.toFixed(0)} us/check (main ${runB.mainThreadUs.toFixed(0)}) ${runB.perSecond.toFixed(0)}/s`,
    );
  }
  report(
    "CPU per check (us)",
    runs.map(([a, b]) => [a.cpuPerCheckUs, b.cpuPerCheckUs]),
  );
  report(
    "main thread CPU per check (us)",
    runs.map(([a, b]) => [a.mainThreadUs, b.mainThreadUs]),
  );
  report(
    "checks per second",
    runs.map(([a, b]) => [a.perSecond, b.perSecond]),
  );
} finally {
  for (const service of services) await service.stop();
  await target.stop();
  rmSync(dir, { recursive: true, force: true });
}

/** A's and B's medians, and B/A of each pair: its median and its spread, which says how far to trust it. */
function report(label: string, pairsOf: readonly (readonly [number, number])[]): void {
  const ratios = pairsOf.map(([a, b]) => b / a).sort((x, y) => x - y);
  const a = median(pairsOf.map(([value]) => value));
  const b = median(pairsOf.map(([, value]) => value));
  const quartile = (q: number) => ratios[Math.min(ratios.length - 1, Math.floor(q * ratios.length))] ?? Number.NaN;
  console.log(
    `${label}: A ${round(a)}, B ${round(b)}; B/A by pair: median ${round(median(ratios), 3)}, middle half ${round(quartile(0.25), 3)}-${round(quartile(0.75), 3)}`,
  );
}

function whole(name: string, fallback: number): number {
  const value = env[name];
  if (value === undefined || value === "") return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`${name} must be a whole number above 0, got "${value}"`);
  return parsed;
}

function words(value: string | undefined): string[] {
  return (value ?? "").split(/\s+/).filter((word) => word !== "");
}

function assignment(word: string): [string, string] {
  const equals = word.indexOf("=");
  if (equals <= 0) throw new Error(`expected NAME=value, got "${word}"`);
  return [word.slice(0, equals), word.slice(equals + 1)];
}
