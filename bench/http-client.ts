import { performance } from "node:perf_hooks";
import { Agent, request } from "undici";

/** One answer, read whole, with the time the bench waited for it. */
export interface Answer {
  readonly status: number;
  readonly body: string;
  readonly elapsedMs: number;
}

/** A keep-alive client for scenarios that read answers (the load generator cannot). */
export function createClient(connections: number) {
  const agent = new Agent({ connections, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000, keepAliveTimeout: 30_000 });
  return {
    async get(url: string, headers: Readonly<Record<string, string>> = {}): Promise<Answer> {
      const started = performance.now();
      const response = await request(url, { dispatcher: agent, headers: { ...headers } });
      const body = await response.body.text();
      return { status: response.statusCode, body, elapsedMs: performance.now() - started };
    },
    close: () => agent.close(),
  };
}

export type Client = ReturnType<typeof createClient>;

/** Runs `count` calls of `call` with at most `concurrency` at once; results in completion order. */
export async function pooled<T>(count: number, concurrency: number, call: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results.push(await call(index));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

/** The `data` of a sitediag envelope, typed loosely: the bench reads only a few fields. */
export interface SiteData {
  readonly status?: string;
  readonly statusCode?: number | null;
  readonly responseTime?: number | null;
  readonly failedStage?: string | null;
  readonly redirectHops?: readonly unknown[] | null;
  readonly redirects?: number;
  readonly chainStatus?: string;
  readonly chain?: readonly unknown[];
}

export function siteData(answer: Answer): SiteData {
  if (answer.status !== 200) throw new Error(`sitediag answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  return (JSON.parse(answer.body) as { data: SiteData }).data;
}
