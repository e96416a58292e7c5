import { type AbortWatch, createDeadline, type Deadline, sharedClockMs } from "../probe/clock.js";
import type { DiagnosticRunner } from "../runner/diagnostic-runner.js";
import type { VantageEntry, VantageFanout, VantageInfo, VantageJob, VantageOutcomeOf } from "./vantage-fanout.js";

/** A vantage whose diagnostics run in this process, on its own runner (its own resolver, policy and limits). */
export interface LocalVantage {
  readonly info: VantageInfo;
  readonly runner: DiagnosticRunner;
}

/** The vantage of an instance that names none (SITEDIAG_VANTAGE unset). */
export const LOCAL_VANTAGE: VantageInfo = { name: "local" };

/**
 * The VantageFanout without an engine: every vantage it knows runs in this
 * process, on its own runner. The embedded default (the SQLite store) is one
 * of them, `self`, running on the service's runner; a name it does not know
 * has no live instance. Tests build one of several, each on a runner with
 * its own DNS servers, to stand for regions that see the Internet apart.
 * `self` is listed first; names must be distinct.
 */
export function createLocalFanout(self: LocalVantage, others: readonly LocalVantage[] = []): VantageFanout {
  const members = new Map<string, LocalVantage>();
  for (const member of [self, ...others]) {
    if (members.has(member.info.name)) throw new Error(`vantage ${member.info.name} is given twice`);
    members.set(member.info.name, member);
  }
  const infos = [...members.values()].map((member) => member.info).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let closed = false;
  return {
    self: self.info,
    alive: () => Promise.resolve(closed ? [] : infos),
    // Its members live and die with this process: every one known is live.
    known: () => Promise.resolve(closed ? [] : infos.map((info) => ({ info, live: true, lastSeen: Date.now(), instances: [] }))),
    run: <J extends VantageJob>(job: J, vantages: readonly string[], deadline: number, signal: AbortWatch | undefined) =>
      fanOut(
        job,
        vantages.map((name) => members.get(name) ?? { name }),
        deadline,
        signal,
        () => closed,
      ),
    close: () => {
      closed = true;
      return Promise.resolve();
    },
  };
}

type Member = LocalVantage | { readonly name: string };

/** Runs `job` on every member at once and yields each entry as it comes; see VantageFanout.run. */
async function* fanOut<J extends VantageJob>(
  job: J,
  members: readonly Member[],
  deadline: number,
  signal: AbortWatch | undefined,
  closed: () => boolean,
): AsyncGenerator<VantageEntry<VantageOutcomeOf<J>>> {
  type Entry = VantageEntry<VantageOutcomeOf<J>>;
  const started = sharedClockMs();
  const elapsed = () => Math.max(0, Math.round(sharedClockMs() - started));
  const arrived: Entry[] = [];
  const outstanding = new Map<string, { readonly vantage: VantageInfo; readonly stop: Deadline }>();
  let wake: (() => void) | undefined;
  const wakeUp = () => {
    wake?.();
    wake = undefined;
  };
  let pastDeadline = false;
  const timer = setTimeout(
    () => {
      pastDeadline = true;
      wakeUp();
    },
    Math.max(0, deadline - sharedClockMs()),
  );
  signal?.addEventListener("abort", wakeUp, { once: true });
  try {
    for (const member of members) {
      if (!("runner" in member) || closed()) {
        const vantage = "runner" in member ? member.info : { name: member.name };
        arrived.push({ vantage, state: "unavailable", reason: "no_live_instance", elapsedMs: 0 });
        continue;
      }
      const stop = createDeadline();
      const vantage = member.info;
      outstanding.set(vantage.name, { vantage, stop });
      runOn(member.runner, job, stop.signal)
        .then(
          (outcome): Entry => ({ vantage, state: "answered", outcome, elapsedMs: elapsed() }),
          (): Entry => ({ vantage, state: "unavailable", reason: "engine_error", elapsedMs: elapsed() }),
        )
        .then((entry) => {
          // Once its deadline has passed, an entry has been told already.
          if (!outstanding.delete(vantage.name)) return;
          arrived.push(entry);
          wakeUp();
        }, wakeUp);
    }
    while (arrived.length > 0 || outstanding.size > 0) {
      if (signal?.aborted === true) return;
      const entry = arrived.shift();
      if (entry !== undefined) {
        yield entry;
        continue;
      }
      if (pastDeadline) {
        for (const { vantage, stop } of outstanding.values()) {
          stop.abort(new Error("the vantage's deadline passed"));
          arrived.push({ vantage, state: "unavailable", reason: "deadline", elapsedMs: elapsed() });
        }
        outstanding.clear();
        continue;
      }
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", wakeUp);
    // The caller gone (or its iteration ended early): the jobs still out are withdrawn.
    for (const { stop } of outstanding.values()) stop.abort(signal?.reason ?? new Error("the fan-out ended"));
    outstanding.clear();
  }
}

/** The job on one runner, ended by `stop`. */
function runOn<J extends VantageJob>(runner: DiagnosticRunner, job: J, stop: AbortWatch): Promise<VantageOutcomeOf<J>> {
  // The conditional type cannot follow the narrowing of `job.kind`; each branch returns its own kind's outcome.
  if (job.kind === "site-check") return runner.checkSite(job.raw, stop, job.options) as Promise<VantageOutcomeOf<J>>;
  return runner.traceRedirects(job.raw, stop, job.options) as Promise<VantageOutcomeOf<J>>;
}
