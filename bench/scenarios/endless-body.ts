import { parseProbe } from "../blackbox.js";
import { createClient, pooled, siteData } from "../http-client.js";
import { MIB, readProcessMemory } from "../memory.js";
import type { Figure } from "../results.js";
import type { BenchStack } from "../stack.js";
import { median } from "../stats.js";

const BATCH = 20;

/**
 * Scenario 6: the target answers 200 and then streams a body that never
 * ends. A diagnostic needs the status, not the body, so time to result should
 * not depend on the body, and memory should not grow batch after batch.
 * sitediag runs several batches in a fresh process (RSS after the first and
 * after the last); blackbox runs one, since each of its probes reads the
 * body until its timeout.
 */
export async function runEndlessBody(stack: BenchStack): Promise<Figure[]> {
  const batches = stack.options.quick ? 3 : 6;
  const target = stack.target.url("/stream");
  const client = createClient(BATCH);
  const service = await stack.startService("endless");
  try {
    const times: number[][] = [];
    const rssAfter: number[] = [];
    for (let batch = 0; batch < batches; batch++) {
      times.push(
        await pooled(BATCH, BATCH, async () => {
          const answer = await client.get(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(target)}`, {
            "x-api-key": service.apiKey,
          });
          const data = siteData(answer);
          if (data.status !== "up" || data.statusCode !== 200) throw new Error(`scenario 6: sitediag answered ${JSON.stringify(data)}`);
          return answer.elapsedMs;
        }),
      );
      rssAfter.push(readProcessMemory(service.child.pid).rssBytes);
    }
    const blackbox = stack.blackbox;
    const blackboxRun =
      blackbox === null
        ? null
        : await pooled(BATCH, BATCH, async () => {
            const answer = await client.get(blackbox.probeUrl("http_get", target));
            return { elapsedMs: answer.elapsedMs, success: parseProbe(answer.body).success };
          });
    const first = times[0] ?? [];
    const last = times[times.length - 1] ?? [];
    return [
      {
        scenario: 6,
        name: `endless body: time to result, median of batch 1 (${BATCH} at once)`,
        unit: "ms",
        sitediag: median(first),
        blackbox: blackboxRun === null ? null : median(blackboxRun.map((run) => run.elapsedMs)),
      },
      { scenario: 6, name: `endless body: time to result, median of batch ${batches}`, unit: "ms", sitediag: median(last), blackbox: null },
      {
        scenario: 6,
        name: "endless body: probes reporting success",
        unit: "",
        sitediag: BATCH,
        blackbox: blackboxRun === null ? null : blackboxRun.filter((run) => run.success).length,
      },
      { scenario: 6, name: "endless body: RSS after batch 1", unit: "MiB", sitediag: (rssAfter[0] ?? 0) / MIB, blackbox: null },
      {
        scenario: 6,
        name: `endless body: RSS after batch ${batches}`,
        unit: "MiB",
        sitediag: (rssAfter[rssAfter.length - 1] ?? 0) / MIB,
        blackbox: null,
        goal: "flat",
      },
    ];
  } finally {
    await service.stop();
    await client.close();
  }
}
