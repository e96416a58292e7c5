import { parseProbe } from "../blackbox.js";
import { burst } from "../burst-client.js";
import { type Answer, type Client, createClient, pooled, siteData } from "../http-client.js";
import { MIB, readProcessMemory, sampleRss } from "../memory.js";
import type { Figure } from "../results.js";
import type { BenchStack } from "../stack.js";
import { percentile } from "../stats.js";

/** §4.1: six seconds per request; the contract's window for "answered at the timeout" is this plus scheduling. */
const WINDOW_MS = { from: 6_000, to: 6_500 } as const;

/**
 * A service in production is warm. A fresh process would spend the burst
 * compiling its own hot path, which is not what this scenario asks about, so
 * both tools first answer this many quick checks (at this concurrency, far
 * below the burst, so the peak RSS still belongs to the burst).
 */
const WARM_UP = { count: 2_000, concurrency: 50 } as const;

/**
 * Scenario 5: BENCH_INFLIGHT checks (1,000 by default) sent at once to a
 * target that accepts and never answers. Each must come back `down` with
 * failedStage `http` between 6.0 and 6.5 s after it was sent. Each tool runs
 * in a fresh process, so its peak RSS (VmHWM) belongs to this scenario alone.
 */
export async function runInflightScale(stack: BenchStack): Promise<Figure[]> {
  const count = stack.options.inflight;
  const service = await stack.startService("inflight");
  try {
    await warmUp((client) =>
      client.get(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(stack.target.url("/ok"))}`, { "x-api-key": service.apiKey }),
    );
    const sitediag = await measure(
      service.child.pid,
      () =>
        burst(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(stack.target.silentUrl)}`, count, {
          "x-api-key": service.apiKey,
        }),
      (answer) => {
        // A refusal (503) is an answer too, just not the expected one: counted, not thrown.
        const data = answer.status === 200 ? siteData(answer) : {};
        return data.status === "down" && data.failedStage === "http";
      },
    );
    const blackbox = await stack.startBlackbox();
    const other =
      blackbox === null
        ? null
        : await warmUp((client) => client.get(blackbox.probeUrl("http_get", stack.target.url("/ok"))))
            .then(() =>
              measure(
                blackbox.child.pid,
                () => burst(blackbox.probeUrl("http_get", stack.target.silentUrl), count),
                (answer) => answer.status === 200 && !parseProbe(answer.body).success,
              ),
            )
            .finally(() => blackbox.stop());
    const figure = (name: string, unit: string, pick: (m: Measured) => number, goal?: string): Figure => ({
      scenario: 5,
      name: `${count} in flight, never answered: ${name}`,
      unit,
      sitediag: pick(sitediag),
      blackbox: other === null ? null : pick(other),
      ...(goal === undefined ? {} : { goal }),
    });
    return [
      figure("answered down (sitediag: failedStage http)", "", (m) => m.asExpected, `all ${count}`),
      figure("answered in 6.0-6.5 s", "", (m) => m.onTime, `all ${count}`),
      // A check that could not start within the grace is refused as our overload (503, retryable, not charged):
      // never a verdict the target did not earn, but not an answer on time either.
      figure("refused as overload (503)", "", (m) => m.overloaded, "0"),
      figure("time to answer, p50", "ms", (m) => percentile(m.elapsedMs, 50)),
      figure("time to answer, p99", "ms", (m) => percentile(m.elapsedMs, 99)),
      figure("time to answer, slowest", "ms", (m) => Math.max(...m.elapsedMs)),
      figure("peak RSS", "MiB", (m) => m.peakRss / MIB, count === 1_000 ? "< 200 MiB" : undefined),
      figure("RSS before", "MiB", (m) => m.baseRss / MIB),
      figure("RSS per in-flight check", "KiB", (m) => (m.peakRss - m.baseRss) / count / 1_024),
    ];
  } finally {
    await service.stop();
  }
}

/** Warm-up calls on connections closed before the burst: the burst's own connections stay within a peer's share. */
async function warmUp(call: (client: Client) => Promise<unknown>): Promise<void> {
  const client = createClient(WARM_UP.concurrency);
  try {
    await pooled(WARM_UP.count, WARM_UP.concurrency, () => call(client));
  } finally {
    await client.close();
  }
}

interface Measured {
  readonly asExpected: number;
  readonly onTime: number;
  readonly overloaded: number;
  readonly elapsedMs: readonly number[];
  readonly baseRss: number;
  readonly peakRss: number;
}

/**
 * The burst's answers with the tool's memory around it. The connections are
 * dialled inside (the server's side of them is the tool's memory too); each
 * answer's time runs from its own request's write.
 */
async function measure(pid: number, send: () => Promise<Answer[]>, expected: (answer: Answer) => boolean): Promise<Measured> {
  const base = readProcessMemory(pid).rssBytes;
  const sampler = sampleRss(pid);
  let sampled = 0;
  let answers: Answer[];
  try {
    answers = await send();
  } finally {
    // Stopped whatever happens: a sampler left running outlives the process and hides the first error.
    sampled = sampler.stop();
  }
  return {
    asExpected: answers.filter(expected).length,
    onTime: answers.filter((answer) => inWindow(answer.elapsedMs)).length,
    overloaded: answers.filter((answer) => answer.status === 503).length,
    elapsedMs: answers.map((answer) => answer.elapsedMs),
    baseRss: base,
    peakRss: Math.max(sampled, readProcessMemory(pid).peakRssBytes),
  };
}

function inWindow(elapsedMs: number): boolean {
  return elapsedMs >= WINDOW_MS.from && elapsedMs <= WINDOW_MS.to;
}
