import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticRunner } from "../../src/runner/diagnostic-runner.js";
import { createProbeThreads, type ProbeThreads } from "../../src/runner/probe-threads.js";
import { createThreadedRunner } from "../../src/runner/threaded-runner.js";
import { USER_AGENT } from "../../src/package-info.js";
import { LATE_START_GRACE_MS } from "../../src/probe/overload.js";
import { closedLoopbackPort } from "../../testkit/loopback-ports.js";
import { busiestThread, ownThreadId, threadSchedules } from "../../testkit/thread-schedule.js";
import { freshStaple, STAPLE_VARIETIES, type StapleVariety } from "../fixtures/hostile-staples.js";
import { startStaplingTarget, type StaplingTarget } from "../fixtures/ocsp-staples.js";
import { getTestPki, type TestPki } from "../fixtures/test-ca.js";
import { LOOPBACK_CIDRS } from "../fixtures/test-env.js";

/**
 * A stapled OCSP answer is the target's bytes, and costs the probe thread
 * work: bounded, whatever it holds (issue 36). Each hostile variety is
 * checked against the same site stapling nothing, alternately, one check at
 * a time, and the CPU of this process (the probe thread, the bridge, the
 * target's own side of the handshake) per check is compared: the hostile
 * site may cost at most STAPLE_BOUND_MS more, by the median of each hostile
 * check less the plain check just before it. Before
 * the staple was sized from its headers (ber-shape.ts), 8,000 tiny elements
 * cost 84-134 ms a check, on checks without details too.
 *
 * Then the red-team case of the issue: 60 checks of a hostile site at once
 * while a healthy site is checked beside them; the healthy check must never
 * be answered "could not run this check in time" (an overloaded outcome, the
 * REST door's 503). Before, 50 of the 60 were answered so themselves. A
 * healthy check that starts late while the probe thread ran for less than the
 * grace (LATE_START_GRACE_MS) was held by the machine, not by any staple: the
 * thread spent the rest waiting for a core, as the kernel counts it. CI's
 * Node 20 line once saw one such check among six files on two cores.
 */

/** Generous for a loaded 2-core machine (a check here costs 3-10 ms of CPU), and a tenth of what one wide staple cost before. */
const STAPLE_BOUND_MS = 8;
/** Checks of each site per variety and mode; the median is compared. */
const SAMPLES = 9;
/** Elements or levels of each variety: the issue's 8,000 tiny elements, and the like for the others. */
const SIZES: Readonly<Record<StapleVariety, number>> = { garbage: 16_384, wide: 8_000, deep: 8_000, embedded: 4_000, huge: 20_000 };

let pki: TestPki;
let threads: ProbeThreads;
let runner: DiagnosticRunner;
let plainSite: StaplingTarget;
const hostile = new Map<StapleVariety, StaplingTarget>();

beforeAll(async () => {
  pki = await getTestPki();
  // No name is ever probed: should one slip in, its DNS query goes to a closed loopback port.
  const noDns = `127.0.0.1:${await closedLoopbackPort()}`;
  threads = createProbeThreads(
    { allowCidrs: LOOPBACK_CIDRS, dnsServers: [noDns], ca: pki.caPem, userAgent: USER_AGENT },
    { threads: 1, maxLoopDelayMs: 1_000 },
  );
  plainSite = await startStaplingTarget(pki.valid, null);
  for (const variety of STAPLE_VARIETIES) hostile.set(variety, await startStaplingTarget(pki.valid, freshStaple(variety, SIZES[variety])));
  const ports = [plainSite.port, ...[...hostile.values()].map((site) => site.port)];
  runner = createThreadedRunner(threads, {
    siteTimeoutMs: 6_000,
    traceHopTimeoutMs: 3_000,
    traceTotalTimeoutMs: 10_000,
    tracePorts: ports,
  });
  await threads.ready();
}, 60_000);

afterAll(async () => {
  await plainSite?.close();
  for (const site of hostile.values()) await site.close();
  await threads?.close();
});

/** This process's CPU (user + system) in ms for one is-site-down check, which must answer up. */
async function checkCpuMs(url: string, details: boolean): Promise<number> {
  const before = process.cpuUsage();
  const outcome = await runner.checkSite(url, undefined, { details });
  const spent = process.cpuUsage(before);
  if (outcome.kind !== "result" || outcome.result.status !== "up")
    throw new Error(`${url}: expected up, got ${JSON.stringify(outcome).slice(0, 300)}`);
  return (spent.user + spent.system) / 1_000;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

describe("a hostile staple costs a check a few milliseconds at most", () => {
  it.each(STAPLE_VARIETIES.flatMap((variety) => [[variety, false] as const, [variety, true] as const]))(
    "%s, details %s",
    async (variety, details) => {
      const site = hostile.get(variety);
      if (site === undefined) throw new Error(`no site for ${variety}`);
      // Warm: the first checks of a thread compile what later ones run.
      for (let index = 0; index < 3; index++) await checkCpuMs(plainSite.url, details);
      const plain: number[] = [];
      const stapled: number[] = [];
      for (let index = 0; index < SAMPLES; index++) {
        plain.push(await checkCpuMs(plainSite.url, details));
        stapled.push(await checkCpuMs(site.url, details));
      }
      // Each hostile check against the plain one just before it: a machine growing busier during the samples
      // raises both of a pair alike. Two medians apart let that drift through (on 2026-12-02 a plain check ran
      // 17.9-52.6 ms within one test; the medians stood 8.5 ms apart where the pairs' median was 4.2).
      const over = median(stapled.map((ms, index) => ms - (plain[index] ?? Number.NaN)));
      console.log(
        `${variety} staples, details ${details}: ${median(stapled).toFixed(1)} ms of CPU a check against ${median(plain).toFixed(1)} stapling nothing (${over.toFixed(1)} over by the pairs' median, bound ${STAPLE_BOUND_MS})`,
      );
      expect(
        over,
        `${variety} staples: ${stapled.map((ms) => ms.toFixed(1)).join(" ")} ms a check against ${plain.map((ms) => ms.toFixed(1)).join(" ")} ms without`,
      ).toBeLessThan(STAPLE_BOUND_MS);
    },
    60_000,
  );
});

describe("60 hostile-staple checks at once", () => {
  it("never keep a healthy check beside them from running in time", async () => {
    const site = hostile.get("wide");
    if (site === undefined) throw new Error("no wide site");
    const healthy: string[] = [];
    for (let wave = 0; wave < 2; wave++) {
      const storm = Promise.all(Array.from({ length: 60 }, () => runner.checkSite(site.url, undefined, {})));
      // Asked while the storm's handshakes land on the probe thread, then again as they finish.
      for (let index = 0; index < 4; index++) {
        await new Promise((resolve) => setTimeout(resolve, 150));
        const scheduledBefore = threadSchedules();
        const outcome = await runner.checkSite(plainSite.url, undefined, {});
        const probe = busiestThread(scheduledBefore, threadSchedules(), ownThreadId());
        // A late start while the probe thread ran for less than the grace is the machine's: the thread spent the rest
        // waiting for a core (six test files share two), and no staple's work could have made the check late.
        if (
          outcome.kind === "overloaded" &&
          outcome.overload.why === "late_start" &&
          probe !== undefined &&
          probe.ranMs < LATE_START_GRACE_MS
        ) {
          console.log(
            `a healthy check started late while the probe thread ran ${Math.round(probe.ranMs)} ms and waited ${Math.round(probe.waitedMs)} ms for a core: the machine's delay, not a staple's`,
          );
          healthy.push("up");
          continue;
        }
        healthy.push(
          outcome.kind === "result"
            ? outcome.result.status
            : `${outcome.kind}${outcome.kind === "overloaded" ? ` (${outcome.overload.why}; the probe thread ran ${Math.round(probe?.ranMs ?? 0)} ms, waited ${Math.round(probe?.waitedMs ?? 0)} ms)` : ""}`,
        );
      }
      // The storm's own checks are up; on a machine starved of CPU, 60 handshakes asked at once may also
      // start over a second late (our own scheduling, not the staple's): counted, but at most a few.
      const answers = (await storm).map((outcome) =>
        outcome.kind === "result" ? outcome.result.status : outcome.kind === "overloaded" ? outcome.overload.why : outcome.kind,
      );
      expect(answers.filter((answer) => answer !== "up" && answer !== "late_start")).toEqual([]);
      expect(answers.filter((answer) => answer === "up").length).toBeGreaterThanOrEqual(40);
    }
    expect(healthy).toEqual(Array.from({ length: 8 }, () => "up"));
  }, 120_000);
});
