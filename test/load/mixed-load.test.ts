import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type AccessTestService, startTestService } from "../fixtures/service-harness.js";
import { bounded } from "../fixtures/bounded-calls.js";

const REQUESTS = 2_000;
const CONCURRENCY = 50;

// The heap is compared after full collections; gc() is exposed without restarting the worker.
setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

function heapAfterGc(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}

describe("sustained mixed load through both doors", () => {
  let targets: HttpTargets;
  let access: AccessTestService;
  const agent = new Agent({ connections: CONCURRENCY });
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);

  beforeAll(async () => {
    process.on("unhandledRejection", onRejection);
    targets = await startHttpTargets({
      routes: { "/up": { kind: "respond", status: 200, body: "ok" }, "/old": { kind: "redirect", status: 301, location: "/up" } },
    });
    access = await startTestService({ as: "access", config: { tracePorts: [targets.httpPort] } });
  });
  afterAll(async () => {
    process.off("unhandledRejection", onRejection);
    await agent.close();
    await access?.close();
    await targets?.close();
  });

  it(`answers ${REQUESTS} REST, Connect and gRPC calls with no 5xx, no unhandled rejection, and gives its memory back`, async () => {
    const headers = { "x-api-key": access.key };
    const connect = createClient(DiagnosticsService, createConnectTransport({ baseUrl: access.url, httpVersion: "1.1" }));
    const grpc = createClient(DiagnosticsService, createGrpcTransport({ baseUrl: access.url }));
    const rest = async (path: string, url: string) => {
      const response = await request(`${access.url}/api/v1/${path}?url=${encodeURIComponent(url)}`, { dispatcher: agent, headers });
      const body = (await response.body.json()) as { ok: boolean };
      return { status: response.statusCode, ok: body.ok };
    };
    // One call of each kind per slot, in rotation: every door and both diagnostics stay busy together.
    const calls: ((index: number) => Promise<{ status: number; ok: boolean }>)[] = [
      () => rest("is-site-down", targets.url("/up")),
      () => rest("redirect-check", targets.url("/old")),
      () => rest("is-site-down", "not a url"),
      async () => {
        const result = await connect.checkSite({ url: targets.url("/old") }, { headers });
        return { status: 200, ok: result.finalUrl === targets.url("/up") };
      },
      async () => {
        const result = await grpc.traceRedirects({ url: targets.url("/old") }, { headers });
        return { status: 200, ok: result.redirects === 1 };
      },
    ];
    const run = (count: number) =>
      bounded(count, CONCURRENCY, 40_000, (index) =>
        (calls[index % calls.length] as (i: number) => Promise<{ status: number; ok: boolean }>)(index),
      );

    await run(250);
    const heapBefore = heapAfterGc();
    const outcomes = await run(REQUESTS);
    const heapAfter = heapAfterGc();

    expect(outcomes.filter((outcome) => outcome.status >= 500)).toEqual([]);
    const statuses = new Map<number, number>();
    for (const outcome of outcomes) statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
    // Every fifth call is the bad url: a charged 400. Everything else is a 200 with the expected result.
    expect(Object.fromEntries(statuses)).toEqual({ 200: (REQUESTS * 4) / 5, 400: REQUESTS / 5 });
    expect(outcomes.filter((outcome) => outcome.status === 200 && !outcome.ok)).toEqual([]);
    expect(rejections).toEqual([]);
    // Charges are kept in SQLite, not in the heap: what 2,000 calls leave behind must be small.
    expect(heapAfter - heapBefore).toBeLessThan(16 * 1024 * 1024);
  }, 50_000);
});
