import { randomBytes } from "node:crypto";
import type { Registry } from "prom-client";
import { sharedClockMs, type AbortWatch } from "../../probe/clock.js";
import type { DiagnosticRunner } from "../../runner/diagnostic-runner.js";
import { encodeJob } from "./job-codec.js";
import { openReplyInbox } from "./reply-inbox.js";
import { vantageKeys } from "./vantage-keys.js";
import { createVantageMetrics, type VantageMetrics } from "./vantage-metrics.js";
import { connectRedis, disconnect, messageOf, whenReady, type RedisClient, type VantageRedisLocation } from "./vantage-redis.js";
import { clockOffsetFromRedis, vantageRegistry } from "./vantage-registry.js";
import { startVantageWorker, type VantageWorker } from "./vantage-worker.js";
import type { VantageEntry, VantageFanout, VantageInfo, VantageJob, VantageOutcomeOf } from "../vantage-fanout.js";

/** The engine's timings; the defaults suit a deployment, tests shorten them. */
export interface FanoutTiming {
  /** Heartbeat period (ms). */
  readonly beatMs: number;
  /** An instance unseen this long is gone (ms). */
  readonly expiryMs: number;
  /** A taken job idle this long is taken over by a sibling (ms): a small share of a diagnostic's time. */
  readonly claimIdleMs: number;
  /** How long a blocked read waits before it looks again (ms). */
  readonly blockMs: number;
  /** Expiry of answers not read (ms). */
  readonly replyTtlMs: number;
  /** A vantage silent this long is forgotten: `all` no longer asks it (SITEDIAG_VANTAGE_FORGET_AFTER). */
  readonly forgetAfterMs: number;
}

export const DEFAULT_TIMING: FanoutTiming = {
  beatMs: 1_000,
  expiryMs: 5_000,
  claimIdleMs: 2_000,
  blockMs: 5_000,
  replyTtlMs: 60_000,
  forgetAfterMs: 86_400_000,
};

export interface RedisFanoutOptions {
  /** The store's Redis (SITEDIAG_STORE). */
  readonly location: VantageRedisLocation;
  readonly self: VantageInfo;
  /** Runs this instance's jobs as a worker of `self`; without one the fan-out only dispatches (and `self` is not announced). */
  readonly runner?: Pick<DiagnosticRunner, "checkSite" | "traceRedirects"> | undefined;
  /** Jobs run at once as a worker (SITEDIAG_VANTAGE_MAX_JOBS). */
  readonly maxJobs: number;
  /** The store's key prefix ("sitediag:"); tests sharing one Redis set their own. */
  readonly keyPrefix?: string;
  /** Where the metrics are registered (the service's registry). */
  readonly registry?: Registry | undefined;
  readonly timing?: Partial<FanoutTiming>;
  /** Approximate cap of a vantage's job stream: past it the oldest jobs are trimmed (and their entries end `unavailable`). */
  readonly jobsMaxLen?: number;
  /** Told about Redis trouble and malformed messages; the engine goes on. */
  readonly onTrouble?: (error: unknown, where: string) => void;
}

/** A fan-out over Redis Streams, with what the service's readiness reads. */
export interface RedisFanout extends VantageFanout {
  /** Whether this instance's vantage stream (or, dispatching only, the Redis) answers now: /readyz. */
  ready(): Promise<boolean>;
  /** Forgets every instance of a vantage (`sitediag vantages forget`); how many were forgotten. */
  forget(name: string): Promise<number>;
  /** This process's clock minus the Redis server's (ms), measured now. */
  clockOffset(): Promise<number>;
}

const COMMAND_TIMEOUT_MS = 2_000;

/**
 * Opens the engine's three connections (commands, the worker's blocking read,
 * the reply inbox's blocking read), announces this instance and starts its
 * worker; rejects when the Redis cannot be reached.
 */
export async function createRedisFanout(options: RedisFanoutOptions): Promise<RedisFanout> {
  const timing: FanoutTiming = Object.assign({}, DEFAULT_TIMING, options.timing);
  const keys = vantageKeys(options.keyPrefix ?? "sitediag:");
  const trouble = options.onTrouble ?? (() => undefined);
  const metrics = createVantageMetrics(options.registry);
  const instance = randomBytes(12).toString("base64url");
  const connect = (where: string, extraMs: number) =>
    connectRedis(options.location, { commandTimeoutMs: COMMAND_TIMEOUT_MS + extraMs, onError: (error) => trouble(error, where) });
  const redis = connect("redis", 0);
  const inboxConnection = connect("reply inbox", timing.blockMs);
  const workerConnection = options.runner === undefined ? undefined : connect("worker", timing.blockMs);
  const all = [redis, inboxConnection, ...(workerConnection === undefined ? [] : [workerConnection])];
  try {
    await Promise.all(all.map((client) => whenReady(client, COMMAND_TIMEOUT_MS)));
  } catch (error) {
    all.forEach(disconnect);
    throw new Error(`vantage engine: cannot reach Redis: ${messageOf(error)}`, { cause: error });
  }

  const self = options.self;
  const registry = vantageRegistry(redis, keys, self, instance, timing, options.runner !== undefined);
  const inbox = openReplyInbox(redis, inboxConnection, keys, instance, timing.blockMs, (error) => trouble(error, "reply inbox"));
  let worker: VantageWorker | undefined;
  let beatTimer: NodeJS.Timeout | undefined;
  if (options.runner !== undefined && workerConnection !== undefined) {
    worker = startVantageWorker({
      redis,
      blocking: workerConnection,
      keys,
      vantage: self.name,
      consumer: instance,
      runner: options.runner,
      maxJobs: options.maxJobs,
      claimIdleMs: timing.claimIdleMs,
      blockMs: timing.blockMs,
      replyTtlMs: timing.replyTtlMs,
      repliesMaxLen: REPLIES_MAX_LEN,
      observer: workerObserver(metrics, self.name, trouble),
    });
    await registry.beat().catch((error: unknown) => trouble(error, "heartbeat"));
    beatTimer = setInterval(() => void registry.beat().catch((error: unknown) => trouble(error, "heartbeat")), timing.beatMs);
  }

  const alive = () => registry.alive();
  // A fan-out reuses a membership read this recent when it names every vantage asked: a round trip
  // saved per run. A vantage that died meanwhile is then sent its job and ends `unavailable` at the
  // deadline rather than at once; one not in the list is always read afresh.
  let recent: { readonly at: number; readonly list: readonly VantageInfo[] } | undefined;
  const aliveForRun = async (names: readonly string[]) => {
    if (
      recent !== undefined &&
      performance.now() - recent.at <= ALIVE_REUSE_MS &&
      names.every((name) => recent?.list.some((info) => info.name === name))
    )
      return recent.list;
    const at = performance.now();
    const list = await alive();
    recent = { at, list };
    return list;
  };

  return {
    self,
    alive,
    known: () => registry.known(),
    forget: (name) => registry.forget(name),
    clockOffset: () => clockOffsetFromRedis(redis),
    run: <J extends VantageJob>(job: J, vantages: readonly string[], deadline: number, signal: AbortWatch | undefined) =>
      fanOut<J>(
        { redis, keys, inbox, alive: aliveForRun, metrics, instance, jobsMaxLen: options.jobsMaxLen ?? JOBS_MAX_LEN, trouble },
        job,
        vantages,
        deadline,
        signal,
      ),
    ready: () => (worker === undefined ? redis.ping().then(() => true) : worker.reachable()).catch(() => false),
    close: async () => {
      clearInterval(beatTimer);
      // Gone from the list first, so no new asker counts on this instance while it finishes its jobs.
      if (worker !== undefined) await registry.leave().catch(() => undefined);
      await worker?.stop();
      await inbox.close();
      // This instance's reply stream has no reader any more: gone now, not when it expires.
      await redis.unlink(keys.replies(instance)).catch(() => undefined);
      await redis.quit().catch(() => disconnect(redis));
    },
  };
}

const ALIVE_REUSE_MS = 250;

/** A vantage's stream holds its waiting and running jobs; this is far beyond a healthy backlog. */
const JOBS_MAX_LEN = 100_000;
/** Notices are read as they come; this bounds a dead dispatcher's stream until it expires. */
const REPLIES_MAX_LEN = 10_000;

interface FanOutContext {
  readonly redis: RedisClient;
  readonly keys: ReturnType<typeof vantageKeys>;
  readonly inbox: ReturnType<typeof openReplyInbox>;
  readonly alive: (names: readonly string[]) => Promise<readonly VantageInfo[]>;
  readonly metrics: VantageMetrics;
  readonly instance: string;
  readonly jobsMaxLen: number;
  readonly trouble: (error: unknown, where: string) => void;
}

type Entry<J extends VantageJob> = VantageEntry<VantageOutcomeOf<J>>;

async function* fanOut<J extends VantageJob>(
  context: FanOutContext,
  job: J,
  vantages: readonly string[],
  deadline: number,
  signal: AbortWatch | undefined,
): AsyncGenerator<Entry<J>> {
  const started = performance.now();
  // Whole milliseconds, as the seam promises: the answer's elapsed_ms is an int32, and a fraction fails its encoding.
  const elapsed = () => Math.max(0, Math.round(performance.now() - started));
  const { redis, keys, metrics } = context;
  const request = randomBytes(12).toString("base64url");
  const arrived: Entry<J>[] = [];
  const out = new Map<string, { readonly info: VantageInfo; id: string | undefined }>();
  let notify: (() => void) | undefined;
  const push = (entry: Entry<J>) => {
    arrived.push(entry);
    if (entry.state === "unavailable")
      metrics.unavailable.inc({ vantage: out.has(entry.vantage.name) ? entry.vantage.name : "unknown", reason: entry.reason });
    else metrics.entrySeconds.observe({ vantage: entry.vantage.name }, entry.elapsedMs / 1_000);
    out.delete(entry.vantage.name);
    notify?.();
  };
  const unavailable = (vantage: VantageInfo, reason: "no_live_instance" | "deadline" | "engine_error"): Entry<J> => ({
    vantage,
    state: "unavailable",
    reason,
    elapsedMs: elapsed(),
  });

  const stopListening = context.inbox.expect(request, job.kind, (name, reply) => {
    const sent = out.get(name);
    if (sent === undefined) return;
    if (!reply.ok) return context.trouble(new Error(`a malformed answer from ${name}: ${reply.reason}`), "reply");
    if (!reply.value.ok) return push(unavailable(sent.info, "engine_error"));
    // The codec checked the outcome's kind against the job's kind.
    push({ vantage: sent.info, state: "answered", outcome: reply.value.outcome as VantageOutcomeOf<J>, elapsedMs: elapsed() });
  });
  const onAbort = () => notify?.();
  signal?.addEventListener("abort", onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    let live: Map<string, VantageInfo> | undefined;
    try {
      live = new Map((await context.alive(vantages)).map((info) => [info.name, info]));
    } catch (error) {
      context.trouble(error, "alive");
    }
    const encoded = encodeJob({ job, deadline, dispatcher: context.instance, request });
    for (const name of vantages) {
      const info = live?.get(name);
      if (info === undefined) {
        arrived.push(unavailable({ name }, live === undefined ? "engine_error" : "no_live_instance"));
        metrics.unavailable.inc({ vantage: "unknown", reason: live === undefined ? "engine_error" : "no_live_instance" });
        continue;
      }
      const sent: { readonly info: VantageInfo; id: string | undefined } = { info, id: undefined };
      out.set(name, sent);
      redis.xadd(keys.jobs(name), "MAXLEN", "~", context.jobsMaxLen, "*", "job", encoded).then(
        (id) => {
          sent.id = id ?? undefined;
        },
        (error: unknown) => {
          context.trouble(error, "send job");
          if (out.get(name) === sent) push(unavailable(info, "engine_error"));
        },
      );
    }
    while (arrived.length > 0 || out.size > 0) {
      const next = arrived.shift();
      if (next !== undefined) {
        if (signal?.aborted === true) return;
        yield next;
        continue;
      }
      if (signal?.aborted === true) return;
      const remaining = deadline - sharedClockMs();
      if (remaining <= 0) {
        for (const sent of [...out.values()]) push(unavailable(sent.info, "deadline"));
        continue;
      }
      await new Promise<void>((resolve) => {
        notify = resolve;
        // Clamped to setTimeout's range: past it, the timer would fire at once, and again, every millisecond.
        timer = setTimeout(resolve, Math.min(remaining, 2 ** 31 - 1));
      });
      notify = undefined;
      clearTimeout(timer);
    }
  } finally {
    clearTimeout(timer);
    stopListening();
    signal?.removeEventListener("abort", onAbort);
    // Withdraw what nobody will read: a job not yet taken is never run; the answers, if any came, go.
    const withdrawn = [...out.entries()].filter(([, sent]) => sent.id !== undefined);
    for (const [name, sent] of withdrawn) void redis.xdel(keys.jobs(name), sent.id ?? "").catch(() => undefined);
    void redis.unlink(keys.reply(context.instance, request)).catch(() => undefined);
  }
}

function workerObserver(metrics: VantageMetrics, vantage: string, trouble: (error: unknown, where: string) => void) {
  return {
    ran: (_kind: VantageJob["kind"], seconds: number) => {
      metrics.jobs.inc({ vantage, outcome: "answered" });
      metrics.jobSeconds.observe({ vantage }, seconds);
    },
    dropped: (why: "late" | "malformed", detail: string) => {
      metrics.jobs.inc({ vantage, outcome: why });
      if (why === "malformed") trouble(new Error(`a malformed job: ${detail}`), "worker");
    },
    pending: (waiting: number, taken: number) => {
      metrics.pending.set({ vantage, state: "waiting" }, waiting);
      metrics.pending.set({ vantage, state: "taken" }, taken);
    },
    trouble: (error: unknown) => trouble(error, "worker"),
  };
}
