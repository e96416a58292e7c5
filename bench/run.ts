/**
 * `npm run bench`: sitediag side by side with Prometheus' blackbox_exporter,
 * everything on loopback. Prints a table and writes bench/results/latest.json.
 * Sizes come from the environment (bench-options.ts); BENCH_QUICK=1 for a
 * quick run. Never part of `npm test`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { VERSION } from "../src/package-info.js";
import { benchOptions } from "./bench-options.js";
import { createClient } from "./http-client.js";
import { type Figure, ratio, renderTable } from "./results.js";
import { runAccessPath } from "./scenarios/access-path.js";
import { runEndlessBody } from "./scenarios/endless-body.js";
import { runHttps } from "./scenarios/https.js";
import { runInflightScale } from "./scenarios/inflight-scale.js";
import { runProbeFloor } from "./scenarios/probe-floor.js";
import { THROUGHPUT_CASES, runThroughput } from "./scenarios/throughput.js";
import { runTimingFidelity } from "./scenarios/timing-fidelity.js";
import { runVantageFanout } from "./scenarios/vantage-fanout.js";
import { startStack } from "./stack.js";
import { wrkAvailable } from "./wrk.js";

/** dist/bench/ -> bench/results/ in the source tree. */
const RESULTS_DIR = join(import.meta.dirname, "..", "..", "bench", "results");

const options = benchOptions();
if (!(await wrkAvailable())) {
  console.error("bench: wrk is not installed (apt-get install wrk); it drives the throughput scenarios");
  process.exit(2);
}
const startedAt = new Date();
const stack = await startStack(options);
const client = createClient(options.concurrency + 100);
const figures: Figure[] = [];
const step = async (scenario: number, work: () => Promise<Figure[]>) => {
  if (!options.scenarios.has(scenario)) return;
  const began = Date.now();
  process.stderr.write(`bench: scenario ${scenario}...`);
  figures.push(...(await work()));
  process.stderr.write(` ${((Date.now() - began) / 1_000).toFixed(1)} s\n`);
};
try {
  console.error(
    `bench: sitediag ${VERSION}, blackbox_exporter ${stack.blackbox?.version ?? "not installed"}, ` +
      `${options.rounds} round(s) of ${options.durationSeconds} s at concurrency ${options.concurrency}, ${options.workers} worker(s)${options.quick ? " (quick)" : ""}`,
  );
  for (const spec of THROUGHPUT_CASES.filter((item) => item.scenario <= 3))
    await step(spec.scenario, () => runThroughput(stack, client, spec));
  await step(4, () => runTimingFidelity(stack, client));
  await step(5, () => runInflightScale(stack));
  await step(6, () => runEndlessBody(stack));
  await step(7, () => runAccessPath(stack));
  await step(8, () => runProbeFloor(stack));
  for (const spec of THROUGHPUT_CASES.filter((item) => item.scenario > 8))
    await step(spec.scenario, () => runThroughput(stack, client, spec));
  await step(10, () => runVantageFanout(stack));
  await step(11, () => runHttps(stack, client));
} finally {
  await client.close();
  await stack.close();
}

const finishedAt = new Date();
console.log(renderTable(figures));
mkdirSync(RESULTS_DIR, { recursive: true });
const report = {
  startedAt: startedAt.toISOString(),
  finishedAt: finishedAt.toISOString(),
  sitediag: VERSION,
  blackboxExporter: stack.blackbox?.version ?? null,
  node: process.version,
  machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? "unknown", memoryBytes: totalmem() },
  options: { ...options, scenarios: [...options.scenarios] },
  figures: figures.map((figure) => ({ ...figure, ratio: ratio(figure) })),
};
writeFileSync(join(RESULTS_DIR, "latest.json"), `${JSON.stringify(report, null, 2)}\n`);
console.error(
  `bench: ${((finishedAt.getTime() - startedAt.getTime()) / 1_000).toFixed(0)} s; figures written to bench/results/latest.json`,
);
