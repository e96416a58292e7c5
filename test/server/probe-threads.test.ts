import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LATE_START_GRACE_MS } from "../../src/probe/overload.js";
import { createProbeThreads, ProbeThreadUnavailable, type ProbeThreads } from "../../src/runner/probe-threads.js";
import { createThreadedRunner, type ThreadedRunner } from "../../src/runner/threaded-runner.js";
import { USER_AGENT } from "../../src/package-info.js";
import type { CrashJob, HoldJob } from "../fixtures/holding-diagnostic-thread.js";
import { closedLoopbackPort } from "../../testkit/loopback-ports.js";
import { startRawTarget, type RawTarget } from "../fixtures/raw-targets.js";
import { until } from "../fixtures/until.js";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";
import { sampleValue } from "../fixtures/prometheus-text.js";
import { manualLoad } from "../fixtures/manual-load.js";

/** Scrapes /metrics until `read` finds what it waits for. */
async function scrapeUntil(service: ServeTestService, read: (text: string) => boolean): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    if (read(text)) return text;
    if (attempt > 500) throw new Error(`/metrics never showed what was awaited:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The key's standing as the store has it now (credits used). */
async function usageOf(service: ServeTestService): Promise<{ readonly usage: number }> {
  const usage = await service.store.usage(service.keyId, {
    budget: service.config.creditBudget,
    windowSeconds: service.config.creditWindowSeconds,
  });
  return { usage: usage.used };
}

const siteCheck = (service: ServeTestService, target: string) =>
  fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(target)}`, { headers: { "x-api-key": service.key } });

describe("the service on probe threads", () => {
  let service: ServeTestService;
  let ok: RawTarget;
  let silent: RawTarget;

  beforeAll(async () => {
    ok = await startRawTarget({ kind: "delayed", delayMs: 0 });
    silent = await startRawTarget({ kind: "silent" });
    service = await startTestService({ as: "serve", config: { probeThreads: 1 } });
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
    const text = await scrapeUntil(
      service,
      (scraped) => sampleValue(scraped, "sitediag_probe_loop_delay_seconds", { thread: "0", stat: "p99" }) !== undefined,
    );
    for (const stat of ["p50", "p99", "max"]) {
      expect(sampleValue(text, "sitediag_probe_loop_delay_seconds", { thread: "0", stat })).toBeGreaterThanOrEqual(0);
    }
    expect(sampleValue(text, "sitediag_probe_queue_waiting")).toBe(0);
  });

  it("answers a check whose probe thread died with a retryable 503, not a verdict, and serves the next one on its replacement", async () => {
    const prober = (service.runner as ThreadedRunner).threads;
    const [thread] = prober.workers();
    if (thread === undefined) throw new Error("no probe thread");
    const accepted = silent.connections();
    const pending = siteCheck(service, silent.url);
    await until(() => (silent.connections() > accepted ? true : undefined));
    await thread.terminate();
    const response = await pending;
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unavailable");
    await prober.ready();
    expect(prober.workers()).toHaveLength(1);
    expect(prober.workers()[0]).not.toBe(thread);
    expect((await siteCheck(service, ok.url)).status).toBe(200);
  });
});

describe("the service when its probe thread keeps dying", () => {
  // The test entry can be killed on demand. From the second death in a row a replacement waits 1 s: long enough to
  // see the service not ready on a busy machine, short enough for seven deaths (the growth is runner/probe-threads.test's).
  const entry = new URL("../fixtures/holding-diagnostic-thread.ts", import.meta.url);
  const restart = { firstDelayMs: 1_000, maxDelayMs: 1_000, healthyAfterMs: 60_000 };
  let service: ServeTestService;
  let prober: ProbeThreads;
  let ok: RawTarget;
  let silent: RawTarget;
  let handedOver = 0;

  beforeAll(async () => {
    ok = await startRawTarget({ kind: "delayed", delayMs: 0 });
    silent = await startRawTarget({ kind: "silent" });
    service = await startTestService({
      as: "serve",
      config: { probeThreads: 1 },
      runner: (config) => {
        const limits = {
          siteTimeoutMs: config.siteTimeoutMs,
          traceHopTimeoutMs: config.traceHopTimeoutMs,
          traceTotalTimeoutMs: config.traceTotalTimeoutMs,
          tracePorts: [ok.port, silent.port],
        };
        prober = createProbeThreads(
          { allowCidrs: config.allowCidrs, dnsServers: [], userAgent: USER_AGENT },
          { threads: 1, maxLoopDelayMs: 1_000, entry, restart },
        );
        // The diagnostics' jobs are counted as they are handed to a thread: a held thread's test waits for them.
        const counted = Object.assign(Object.create(prober) as ProbeThreads, {
          run: (job: unknown, signal?: Parameters<ProbeThreads["run"]>[1]) => {
            handedOver++;
            return prober.run(job, signal);
          },
        });
        return createThreadedRunner(counted, limits);
      },
    });
  });
  afterAll(async () => {
    await service?.close();
    await ok?.close();
    await silent?.close();
  });

  const readyz = async () => (await fetch(`${service.url}/readyz`)).status;
  /**
   * Holds the one thread, makes `call`, and lets the thread go once `jobs`
   * diagnostics of it have been handed over and the grace has passed since:
   * each is then late however long the machine took to get it there.
   */
  const behindLateHold = async <T>(jobs: number, call: () => Promise<T>): Promise<T> => {
    // A hold just ended (the test before) leaves a report of a congested loop until the next one, 0.1 s on;
    // a call admitted meanwhile would wait in the probe queue for a report the held thread cannot send.
    while (prober.load.congested()) await new Promise((resolve) => setTimeout(resolve, 10));
    const gate = new SharedArrayBuffer(4);
    const held = prober.run({ holdMs: 20_000, gate } satisfies HoldJob);
    const before = handedOver;
    const answer = call();
    while (handedOver < before + jobs) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, LATE_START_GRACE_MS + 200));
    Atomics.store(new Int32Array(gate), 0, 1);
    Atomics.notify(new Int32Array(gate), 0);
    await held;
    return answer;
  };
  const used = (response: Response) => Number(response.headers.get("x-ratelimit-used"));
  const connectCheck = (target: string) =>
    fetch(`${service.url}/sitediag.v1.DiagnosticsService/CheckSite`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": service.key },
      body: JSON.stringify({ url: target }),
    });
  /** Kills the thread (with a job that crashes it), and returns once it is dead: the job's answer says so. */
  const kill = (crash: CrashJob["crash"]) =>
    expect(prober.run({ crash } satisfies CrashJob)).rejects.toBeInstanceOf(ProbeThreadUnavailable);

  it("a check in flight on the dying thread is 503 with Retry-After on REST, not charged, and sent to its target once", async () => {
    const before = used(await siteCheck(service, ok.url));
    const accepted = silent.connections();
    const pending = siteCheck(service, silent.url);
    await until(() => (silent.connections() > accepted ? true : undefined));
    await kill("throw");
    const response = await pending;
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("unavailable");
    expect(body.error.message).toContain("nothing was charged");
    // Its 2 credits came back: what the answer says is used is what it was before it.
    expect(used(response)).toBe(before);
    await prober.ready();
    const after = await siteCheck(service, ok.url);
    expect(after.status).toBe(200);
    expect(used(after)).toBe(before + 2);
    // Never run again by us: the target saw that one request only.
    expect(silent.connections()).toBe(accepted + 1);
  });

  it("the same on Connect: Unavailable, not charged", async () => {
    await prober.ready();
    const { usage: before } = await usageOf(service);
    const accepted = silent.connections();
    const pending = connectCheck(silent.url);
    await until(() => (silent.connections() > accepted ? true : undefined));
    await kill("exit");
    const response = await pending;
    expect(response.status).toBe(503);
    expect(((await response.json()) as { code: string }).code).toBe("unavailable");
    expect((await usageOf(service)).usage).toBe(before);
    expect(silent.connections()).toBe(accepted + 1);
  });

  it("killed more times than the old limit, it always comes back: /readyz says not ready while none runs, checks are 503 then, and work once it is back", async () => {
    const deathsBefore = sampleValue(await (await fetch(`${service.url}/metrics`)).text(), "sitediag_probe_thread_deaths_total") ?? 0;
    for (let death = 1; death <= 7; death++) {
      await prober.ready();
      expect(await readyz()).toBe(200);
      await kill(death % 2 === 0 ? "exit" : "throw");
      // From the second death in a row its replacement waits out a backoff: nothing runs meanwhile.
      if (death >= 2) {
        expect(await readyz()).toBe(503);
        const refused = await siteCheck(service, ok.url);
        expect(refused.status).toBe(503);
        expect(refused.headers.get("retry-after")).toBe("1");
      }
    }
    await prober.ready();
    expect(await readyz()).toBe(200);
    const health = await fetch(`${service.url}/grpc.health.v1.Health/Check`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(((await health.json()) as { status: string }).status).toBe("SERVING");
    expect((await siteCheck(service, ok.url)).status).toBe(200);
    // The live count is read on each loop-delay report, which the new thread sends within 0.1 s.
    const text = await scrapeUntil(service, (scraped) => sampleValue(scraped, "sitediag_probe_threads_live") === 1);
    expect(sampleValue(text, "sitediag_probe_thread_deaths_total")).toBe(deathsBefore + 7);
    expect(sampleValue(text, "sitediag_probe_queue_rejections_total", { operation: "CheckSite", why: "no_thread" })).toBeGreaterThanOrEqual(
      6,
    );
  }, 60_000);

  it("grpc.health.v1 says NOT_SERVING while no probe thread runs", async () => {
    await prober.ready();
    await kill("exit");
    await kill("throw").catch(() => undefined);
    // Two deaths in a row: the replacement waits out its backoff.
    const health = await fetch(`${service.url}/grpc.health.v1.Health/Check`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(((await health.json()) as { status: string }).status).toBe("NOT_SERVING");
    await prober.ready();
  });

  it("a check that could not start within the grace (its thread held) is 503 with Retry-After, not charged, and nothing is sent to its target", async () => {
    await prober.ready();
    const before = used(await siteCheck(service, ok.url));
    const accepted = silent.connections();
    const response = await behindLateHold(1, () => siteCheck(service, silent.url));
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unavailable");
    expect(used(response)).toBe(before);
    expect(silent.connections()).toBe(accepted);
    const text = await (await fetch(`${service.url}/metrics`)).text();
    expect(sampleValue(text, "sitediag_overload_answers_total", { operation: "CheckSite", why: "late_start" })).toBe(1);
  });

  it("a batch whose traces could not start within the grace streams each as unavailable, and its credits come back when it ends", async () => {
    await prober.ready();
    const { usage: before } = await usageOf(service);
    const accepted = silent.connections();
    const response = await behindLateHold(2, () =>
      fetch(`${service.url}/api/v1/batch/redirect-check`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": service.key },
        body: JSON.stringify({ items: [{ url: silent.url }, { url: `${silent.url}other` }] }),
      }),
    );
    const lines = (await response.text())
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as { ok: boolean; error?: { code: string } });
    expect(response.status).toBe(200);
    // The head went out before the items ran: it shows the whole charge (2 traces, 5 credits each).
    expect(response.headers.get("x-ratelimit-used")).toBe(String(before + 10));
    expect(lines.map((line) => [line.ok, line.error?.code])).toEqual([
      [false, "unavailable"],
      [false, "unavailable"],
    ]);
    expect(silent.connections()).toBe(accepted);
    // Given back as the stream ended, a moment after its last line may have been read.
    for (let attempt = 0; (await usageOf(service)).usage !== before && attempt < 100; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await usageOf(service)).usage).toBe(before);
    const text = await (await fetch(`${service.url}/metrics`)).text();
    expect(sampleValue(text, "sitediag_overload_answers_total", { operation: "TraceRedirectsBatch", why: "late_start" })).toBe(2);
  });
});

describe("the service while the probe threads are saturated", () => {
  const manual = manualLoad();
  let service: ServeTestService;
  let ok: RawTarget;

  beforeAll(async () => {
    ok = await startRawTarget({ kind: "delayed", delayMs: 0 });
    service = await startTestService({
      as: "serve",
      config: { probeQueue: 1 },
      wrapRunner: (runner) => ({ ...runner, load: manual.load }),
    });
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
