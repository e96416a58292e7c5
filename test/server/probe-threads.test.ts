import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ThreadedProber } from "../../src/probe/threaded-prober.js";
import { closedLoopbackPort } from "../../testkit/loopback-ports.js";
import { startRawTarget, type RawTarget } from "../fixtures/raw-targets.js";
import { until } from "../fixtures/until.js";
import { type ObservedService, startObservedService } from "../observability/observed-service.js";
import { sampleValue } from "../observability/prometheus-text.js";
import { manualLoad } from "../fixtures/manual-load.js";

/** Scrapes /metrics until `read` finds what it waits for. */
async function scrapeUntil(service: ObservedService, read: (text: string) => boolean): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    if (read(text)) return text;
    if (attempt > 500) throw new Error(`/metrics never showed what was awaited:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const siteCheck = (service: ObservedService, target: string) =>
  fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(target)}`, { headers: { "x-api-key": service.key } });

describe("the service on probe threads", () => {
  let service: ObservedService;
  let ok: RawTarget;
  let silent: RawTarget;

  beforeAll(async () => {
    ok = await startRawTarget({ kind: "delayed", delayMs: 0 });
    silent = await startRawTarget({ kind: "silent" });
    service = await startObservedService({ config: { probeThreads: 1 } });
  });
  afterAll(async () => {
    await service?.close();
    await ok?.close();
    await silent?.close();
  });

  it("checks a site with every hop on the probe thread", async () => {
    const response = await siteCheck(service, ok.url);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { status: string; statusCode: number; responseTime: number } };
    expect(body.data).toMatchObject({ status: "up", statusCode: 200 });
    expect(Number.isInteger(body.data.responseTime)).toBe(true);
  });

  it("counts on /metrics every hop a check made on its thread, by outcome", async () => {
    const counted = async () => {
      const text = await (await fetch(`${service.url}/metrics`)).text();
      return {
        response: sampleValue(text, "sitediag_outbound_hops_total", { outcome: "response", stage: "none" }) ?? 0,
        connect: sampleValue(text, "sitediag_outbound_hops_total", { outcome: "failure", stage: "connect" }) ?? 0,
      };
    };
    const before = await counted();
    expect((await siteCheck(service, ok.url)).status).toBe(200);
    expect((await siteCheck(service, `http://127.0.0.1:${await closedLoopbackPort()}/`)).status).toBe(200);
    // The hops ran on the thread, not through the main thread's prober: the thread's answer carries their tally.
    expect(await counted()).toEqual({ response: before.response + 1, connect: before.connect + 1 });
  });

  it("exports the probe thread's loop delay on /metrics", async () => {
    const text = await scrapeUntil(service, (scraped) => sampleValue(scraped, "sitediag_probe_loop_delay_seconds", { thread: "0", stat: "p99" }) !== undefined);
    for (const stat of ["p50", "p99", "max"]) {
      expect(sampleValue(text, "sitediag_probe_loop_delay_seconds", { thread: "0", stat })).toBeGreaterThanOrEqual(0);
    }
    expect(sampleValue(text, "sitediag_probe_queue_waiting")).toBe(0);
  });

  it("answers a check whose probe thread died with a defect (500), and serves the next one on its replacement", async () => {
    const prober = service.prober as ThreadedProber;
    const [thread] = prober.threads();
    if (thread === undefined) throw new Error("no probe thread");
    const accepted = silent.connections();
    const pending = siteCheck(service, silent.url);
    await until(() => (silent.connections() > accepted ? true : undefined));
    await thread.terminate();
    const response = await pending;
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("internal");
    expect(prober.threads()).toHaveLength(1);
    expect(prober.threads()[0]).not.toBe(thread);
    expect((await siteCheck(service, ok.url)).status).toBe(200);
  });
});

describe("the service while the probe threads are saturated", () => {
  const manual = manualLoad();
  let service: ObservedService;
  let ok: RawTarget;

  beforeAll(async () => {
    ok = await startRawTarget({ kind: "delayed", delayMs: 0 });
    service = await startObservedService({ config: { probeQueue: 1 }, wrapProber: (prober) => ({ ...prober, load: manual.load }) });
  });
  afterAll(async () => {
    await service?.close();
    await ok?.close();
  });

  it("holds a new check in the queue, refuses the one beyond it with 503 and Retry-After before any charge, and runs the held one once the loops recover", async () => {
    manual.report(true);
    const held = siteCheck(service, ok.url);
    await scrapeUntil(service, (text) => sampleValue(text, "sitediag_probe_queue_waiting") === 1);
    const refused = await siteCheck(service, ok.url);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("unavailable");
    manual.report(false);
    const answered = await held;
    expect(answered.status).toBe(200);
    // Two checks charged in all (2 credits each): the held one and this one; the refused one cost nothing.
    const next = await siteCheck(service, ok.url);
    expect(next.status).toBe(200);
    expect(next.headers.get("x-ratelimit-used")).toBe("4");
    const text = await (await fetch(`${service.url}/metrics`)).text();
    expect(sampleValue(text, "sitediag_probe_queue_rejections_total", { operation: "CheckSite", why: "full" })).toBe(1);
  });
});
