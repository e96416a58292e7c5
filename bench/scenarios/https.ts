import { join } from "node:path";
import { parseProbe } from "../blackbox.js";
import { type BenchChild, firstLine, startChild } from "../child.js";
import type { LeafKind } from "../https-pki.js";
import { type Client, siteData } from "../http-client.js";
import { processTreeCpuMicros, threadCpuMicros } from "../process-cpu.js";
import type { Figure } from "../results.js";
import type { BenchOptions } from "../bench-options.js";
import type { BenchStack } from "../stack.js";
import { median } from "../stats.js";
import { runWrk } from "../wrk.js";
import { quietLoopbackPort } from "../../testkit/loopback-ports.js";

type Tool = "is-site-down" | "redirect-check";

/** One HTTPS case: sitediag's tool, a leaf kind and a path on the target's HTTPS port for it. */
interface HttpsCase {
  readonly tool: Tool;
  readonly leaf: LeafKind;
  readonly path: string;
  readonly redirects: number;
}

/**
 * is-site-down direct, and two redirects on the same origin (/r/3 -> /r/4 ->
 * /ok), for each leaf; then redirect-check of the same chain, whose hops read
 * the leaf (its warnings' certificate) where is-site-down reads the verdict
 * alone. blackbox_exporter and the floor follow the same redirects.
 */
const CASES: readonly HttpsCase[] = [
  { tool: "is-site-down", leaf: "ecdsa", path: "/ok", redirects: 0 },
  { tool: "is-site-down", leaf: "ecdsa", path: "/r/3", redirects: 2 },
  { tool: "is-site-down", leaf: "rsa", path: "/ok", redirects: 0 },
  { tool: "is-site-down", leaf: "rsa", path: "/r/3", redirects: 2 },
  { tool: "redirect-check", leaf: "ecdsa", path: "/r/3", redirects: 2 },
];

/**
 * One run's CPU per check of a side's own process, split by thread: its main
 * thread, its busiest other thread (sitediag's probe thread, with the one
 * probe thread the bench starts), and the rest (V8's helper threads: mostly
 * garbage collection). Where an HTTPS check's cost above the floor goes.
 */
interface ThreadSplit {
  readonly mainUs: number;
  readonly busiestUs: number;
  readonly restUs: number;
}

interface Run {
  readonly cpuUs: number;
  readonly perSecond: number;
  readonly threads: ThreadSplit;
}

interface Side {
  readonly name: "sitediag" | "blackbox" | "floor" | "floor on two threads";
  readonly pid: number;
  url(target: string, tool: Tool): string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Scenario 11: is-site-down of an HTTPS target (a fresh handshake per check),
 * the bench's CA trusted as a production host trusts a private CA: sitediag
 * with Node's default store plus NODE_EXTRA_CA_CERTS (a serve of its own),
 * blackbox_exporter with its module's ca_file, and the node:tls floor
 * (tls-floor-service.ts: one SecureContext, a fresh connection, GETs on it)
 * as a third column, once on one thread and once split as sitediag is (its
 * HTTP server on the main thread, its checks on one worker). Each driven by
 * wrk in turn, in a rotating order every round, each charged with its own
 * process tree's CPU per completed check.
 */
export async function runHttps(stack: BenchStack, client: Client): Promise<Figure[]> {
  const { options } = stack;
  // redirect-check visits only the ports it is told: the target's HTTPS ports too.
  const httpsPorts = (["ecdsa", "rsa"] as const).map((leaf) => new URL(stack.target.httpsUrl(leaf, "/")).port);
  const service = await stack.startService("https", {
    extraEnv: { NODE_EXTRA_CA_CERTS: stack.pki.caFile, SITEDIAG_TRACE_PORTS: httpsPorts.join(",") },
  });
  const floor = await startFloor(stack.pki.caFile, false);
  const splitFloor = await startFloor(stack.pki.caFile, true);
  try {
    const sides: Side[] = [
      {
        name: "sitediag",
        pid: service.child.pid,
        url: (target, tool) => `${service.url}/api/v1/${tool}?url=${encodeURIComponent(target)}`,
        headers: { "x-api-key": service.apiKey },
      },
      { name: "floor", pid: floor.child.pid, url: (target) => `${floor.url}/check?url=${encodeURIComponent(target)}`, headers: {} },
      {
        name: "floor on two threads",
        pid: splitFloor.child.pid,
        url: (target) => `${splitFloor.url}/check?url=${encodeURIComponent(target)}`,
        headers: {},
      },
    ];
    const blackbox = stack.blackbox;
    if (blackbox !== null)
      sides.push({ name: "blackbox", pid: blackbox.child.pid, url: (target) => blackbox.probeUrl("https_get", target), headers: {} });
    const figures: Figure[] = [];
    let first = true;
    for (const spec of CASES) {
      const target = stack.target.httpsUrl(spec.leaf, spec.path);
      await verify(client, spec, target, sides);
      const measure = async (side: Side, seconds: number): Promise<Run> => {
        const before = processTreeCpuMicros(side.pid);
        const threadsBefore = threadCpuMicros(side.pid);
        const result = await runWrk({
          url: side.url(target, spec.tool),
          headers: side.headers,
          connections: options.concurrency,
          durationSeconds: seconds,
        });
        const spent = processTreeCpuMicros(side.pid) - before;
        const threads = threadSplit(side.pid, threadsBefore, threadCpuMicros(side.pid), result.requests);
        if (result.errors > 0) console.warn(`scenario 11: ${side.name} had ${result.errors} errors or non-2xx answers on ${target}`);
        return { cpuUs: result.requests === 0 ? Infinity : spent / result.requests, perSecond: result.perSecond, threads };
      };
      // Fresh processes warm up until they settle (V8's tiers, the heap; blackbox's TLS caches alike); later cases briefly.
      const { count, seconds } = roundsOf(options);
      for (const side of sides) {
        if (first && !options.quick) await settle(side, measure);
        else await measure(side, first ? 5 : 3);
      }
      // Each settled side then idled while the later ones settled (a minute and more when one takes all its windows),
      // and a Node process pays in its first runs after a long quiet spell: sitediag's first three rounds of 2026-12-02's
      // run cost 3,551-4,304 us a check, its last three 2,266-2,931. One more unmeasured run each, in turn, pays that here.
      if (first && !options.quick) for (const side of sides) await measure(side, seconds);
      first = false;
      const rounds = new Map<Side["name"], Run[]>(sides.map((side) => [side.name, []]));
      for (let round = 0; round < count; round++) {
        const order = round % 2 === 0 ? sides : [...sides].reverse();
        for (const side of order) rounds.get(side.name)?.push(await measure(side, seconds));
      }
      const of = (name: Side["name"], pick: (run: Run) => number) => (rounds.get(name) ?? []).map(pick);
      const label = `${spec.tool} HTTPS ${spec.leaf === "ecdsa" ? "ECDSA P-256" : "RSA-2048"}, ${spec.redirects === 0 ? "direct 200" : `${spec.redirects} redirects, one origin`}`;
      const figure = (
        name: string,
        unit: string,
        pick: (run: Run) => number,
        goal?: string,
        floorName: Side["name"] = "floor",
      ): Figure => ({
        scenario: 11,
        name: `${label}: ${name}`,
        unit,
        sitediag: median(of("sitediag", pick)),
        blackbox: blackbox === null ? null : median(of("blackbox", pick)),
        floor: median(of(floorName, pick)),
        rounds: { sitediag: of("sitediag", pick), blackbox: of("blackbox", pick), floor: of(floorName, pick) },
        ...(goal === undefined ? {} : { goal }),
      });
      // The split of sitediag's and the floor's own process; blackbox_exporter's Go threads are not split.
      const split = (
        name: string,
        ours: (threads: ThreadSplit) => number,
        floors?: (threads: ThreadSplit) => number,
        floorName: Side["name"] = "floor",
      ): Figure => ({
        scenario: 11,
        name: `  of it, ${name}`,
        unit: "us",
        sitediag: median(of("sitediag", (run) => ours(run.threads))),
        blackbox: null,
        ...(floors === undefined ? {} : { floor: median(of(floorName, (run) => floors(run.threads))) }),
      });
      figures.push(
        figure("CPU per check", "us", (run) => run.cpuUs, "<= 1.0x blackbox"),
        split(
          "the main thread",
          (threads) => threads.mainUs,
          (threads) => threads.mainUs,
        ),
        split("sitediag's probe thread (its busiest other thread)", (threads) => threads.busiestUs),
        // The floor has one thread of its own: all its others are V8's.
        split(
          "every other thread (V8's helpers)",
          (threads) => threads.restUs,
          (threads) => threads.busiestUs + threads.restUs,
        ),
        // The same check beside the floor split as sitediag is (HTTP on the main thread, the check on one worker):
        // what the split costs of itself, and what sitediag's own work on each thread adds to it.
        figure("CPU per check, the floor on two threads", "us", (run) => run.cpuUs, undefined, "floor on two threads"),
        split(
          "the main thread, beside the floor's on two threads",
          (threads) => threads.mainUs,
          (threads) => threads.mainUs,
          "floor on two threads",
        ),
        split(
          "the probe thread, beside the floor's check thread",
          (threads) => threads.busiestUs,
          (threads) => threads.busiestUs,
          "floor on two threads",
        ),
        figure("checks/s", "/s", (run) => run.perSecond),
      );
    }
    return figures;
  } finally {
    await floor.child.stop();
    await splitFloor.child.stop();
    await service.stop();
  }
}

/**
 * Warm-up windows of a fresh process, and how close two in a row must be.
 * sitediag is more code than the floor to bring to V8's top tier: after 15 s
 * of load its CPU per check was still falling (rounds of one run, 17:35 UTC:
 * 1,476, 1,302, 1,212 us against blackbox_exporter's flat 1,159, 1,147,
 * 1,183; the floor's first two rounds 6% over its last), so a fixed warm-up
 * charged one tool its start-up. Each side runs until two windows agree.
 */
const WARM_WINDOW_S = 5;
const WARM_SETTLED = 0.03;
const WARM_MIN_WINDOWS = 3;
const WARM_MAX_WINDOWS = 12;

async function settle(side: Side, measure: (side: Side, seconds: number) => Promise<Run>): Promise<void> {
  const costs: number[] = [];
  for (let window = 0; window < WARM_MAX_WINDOWS; window++) {
    costs.push((await measure(side, WARM_WINDOW_S)).cpuUs);
    const [previous, last] = costs.slice(-2);
    if (costs.length >= WARM_MIN_WINDOWS && previous !== undefined && last !== undefined && Math.abs(last / previous - 1) <= WARM_SETTLED)
      break;
  }
  console.log(
    `scenario 11: ${side.name} warmed up in ${costs.length} windows of ${WARM_WINDOW_S} s: ${costs.map(Math.round).join(", ")} us per check`,
  );
}

/**
 * Twice the bench's rounds at half its run length: the same seconds measured,
 * with a side idle for two short runs between its own rather than two long
 * ones. A Node process idle for 20-30 s paid 5-10% more CPU per check in its
 * next run (docs/benchmarks.md), and more alternation cancels more drift.
 */
function roundsOf(options: BenchOptions): { readonly count: number; readonly seconds: number } {
  if (options.quick) return { count: options.rounds, seconds: options.durationSeconds };
  return { count: options.rounds * 2, seconds: Math.max(2, Math.ceil(options.durationSeconds / 2)) };
}

/** Each thread's CPU over a run, per completed check: the process's own thread, the busiest other, the rest summed. */
function threadSplit(pid: number, before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>, checks: number): ThreadSplit {
  const spent = [...after].map(([tid, micros]) => ({ tid, micros: micros - (before.get(tid) ?? 0) }));
  const per = (micros: number) => (checks === 0 ? Infinity : micros / checks);
  const others = spent.filter((thread) => thread.tid !== pid).sort((a, b) => b.micros - a.micros);
  return {
    mainUs: per(spent.find((thread) => thread.tid === pid)?.micros ?? 0),
    busiestUs: per(others[0]?.micros ?? 0),
    restUs: per(others.slice(1).reduce((sum, thread) => sum + thread.micros, 0)),
  };
}

/** One answer from each side before anything is timed: a fast wrong answer is no result. */
async function verify(client: Client, spec: HttpsCase, target: string, sides: readonly Side[]): Promise<void> {
  for (const side of sides) {
    const answer = await client.get(side.url(target, spec.tool), side.headers);
    if (side.name === "sitediag") {
      const data = siteData(answer);
      const answered =
        spec.tool === "is-site-down"
          ? data.status === "up" && data.statusCode === 200 && (data.redirectHops?.length ?? 0) === spec.redirects
          : data.redirects === spec.redirects && data.chain?.length === spec.redirects + 1;
      if (!answered) throw new Error(`scenario 11: sitediag answered ${JSON.stringify(data)} for ${target}`);
    } else if (side.name === "blackbox") {
      const probe = parseProbe(answer.body);
      if (!probe.success || probe.statusCode !== 200 || probe.redirects !== spec.redirects)
        throw new Error(`scenario 11: blackbox probe answered ${JSON.stringify(probe)} for ${target}`);
    } else if (answer.status !== 200 || answer.body !== `{"status":200}`) {
      throw new Error(`scenario 11: the node:tls ${side.name} answered ${answer.status} ${answer.body} for ${target}`);
    }
  }
}

/** The node:tls floor; `threads`: its checks on one worker thread, its HTTP server on the main thread. */
async function startFloor(caFile: string, threads: boolean): Promise<{ readonly child: BenchChild; readonly url: string }> {
  const port = await quietLoopbackPort();
  const child = startChild(process.execPath, [join(import.meta.dirname, "..", "tls-floor-service.js")], {
    env: { PATH: process.env.PATH, BENCH_FLOOR_CA_FILE: caFile, BENCH_FLOOR_PORT: String(port), BENCH_FLOOR_THREADS: threads ? "1" : "0" },
  });
  await firstLine(child);
  return { child, url: `http://127.0.0.1:${port}` };
}
