import { createDeadline, sharedClockMs } from "../../probe/clock.js";
import type { DiagnosticRunner } from "../../runner/diagnostic-runner.js";
import { decodeJob, encodeReply, type JobMessage, type ReplyMessage } from "./job-codec.js";
import { readStreamEntries, type StreamEntry } from "./stream-reply.js";
import { WORKER_GROUP, type VantageKeys } from "./vantage-keys.js";
import { disconnect, messageOf, pause, scriptOf, type RedisClient } from "./vantage-redis.js";

// One instance as a worker of its vantage: it takes jobs from the vantage's
// stream in the workers' consumer group, runs each with this instance's own
// runner (its own address policy, its own limits), writes the outcome to the
// asker's reply key, and acknowledges. While it runs a job it keeps the job's
// pending entry fresh; an entry left idle longer than `claimIdleMs` belongs to
// a worker that died (or hangs), and any sibling takes it over with XAUTOCLAIM.

export interface WorkerOptions {
  /** For every short command (acknowledge, reply, claim). */
  readonly redis: RedisClient;
  /** Held by the blocking XREADGROUP; the worker's own, ended by stop(). */
  readonly blocking: RedisClient;
  readonly keys: VantageKeys;
  readonly vantage: string;
  /** This instance's consumer name in the group. */
  readonly consumer: string;
  readonly runner: Pick<DiagnosticRunner, "checkSite" | "traceRedirects">;
  /** Jobs run at once: the worker reads no more than the slots it has free. */
  readonly maxJobs: number;
  /** A pending job idle this long is taken over by a sibling (ms). */
  readonly claimIdleMs: number;
  /** How long a blocked read waits before it looks again (ms). */
  readonly blockMs: number;
  /** Expiry of the reply key and the asker's reply stream (ms). */
  readonly replyTtlMs: number;
  /** Trim of the asker's reply stream (approximate). */
  readonly repliesMaxLen: number;
  readonly observer: WorkerObserver;
}

export interface WorkerObserver {
  /** A job run and answered, with its time on this worker. */
  ran(kind: JobMessage["job"]["kind"], seconds: number): void;
  /** A job acknowledged without running it: past its deadline, or not a job. */
  dropped(why: "late" | "malformed", detail: string): void;
  /** The vantage's jobs, read now and then: waiting in the stream, and taken but not yet acknowledged. */
  pending(waiting: number, taken: number): void;
  /** Redis unreachable or a defect of ours; the loop goes on. */
  trouble(error: unknown): void;
}

export interface VantageWorker {
  /** Whether the vantage's stream answers now. */
  reachable(): Promise<boolean>;
  /** Stops taking jobs and waits for the ones in hand. */
  stop(): Promise<void>;
}

// HSETNX: the first answer for a vantage is the one kept; a second (a slow
// original after its taker) writes nothing and sends no notice. A small
// answer rides in its notice too (base64, ARGV[6], empty when large), which
// saves the asker the round trip that fetches it from the key.
const REPLY_SCRIPT = scriptOf(`
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[6] == '' then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*', 'r', ARGV[4], 'v', ARGV[1])
else
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*', 'r', ARGV[4], 'v', ARGV[1], 'a', ARGV[6])
end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
`);

/**
 * Answers up to this size ride in the notice as well: a plain result fits, one
 * with details is fetched. With the reply stream's trim it bounds what a dead
 * asker's stream holds until it expires (about 30 MB).
 */
export const INLINE_REPLY_BYTES = 2 * 1024;

/** setTimeout's longest delay: a later (forged) deadline would fire at once, with a warning. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export function startVantageWorker(options: WorkerOptions): VantageWorker {
  const { redis, blocking, keys, observer } = options;
  const stream = keys.jobs(options.vantage);
  const inHand = new Map<string, Promise<void>>();
  let stopped = false;
  let wake: (() => void) | undefined;
  let signalStop: () => void = () => undefined;
  const stopping = new Promise<void>((resolve) => (signalStop = resolve));

  const ensureGroup = () =>
    redis.xgroup("CREATE", stream, WORKER_GROUP, "0", "MKSTREAM").then(
      () => undefined,
      (error: unknown) => {
        if (!messageOf(error).startsWith("BUSYGROUP")) throw error;
      },
    );

  /** `claimed`: taken over from a sibling, so left for later (its idle time runs again) when every slot is busy. */
  function take(entry: StreamEntry, claimed = false): void {
    if (inHand.has(entry.id) || stopped || (claimed && inHand.size >= options.maxJobs)) return;
    const decoded = decodeJob(entry.fields.get("job"));
    if (!decoded.ok) {
      observer.dropped("malformed", decoded.reason);
      void finish(entry.id);
      return;
    }
    if (decoded.value.deadline <= sharedClockMs()) {
      observer.dropped("late", `${Math.round(sharedClockMs() - decoded.value.deadline)} ms late`);
      void finish(entry.id);
      return;
    }
    const work = run(decoded.value)
      .then((reply) => (reply === undefined ? undefined : send(decoded.value, reply)))
      .then(() => finish(entry.id))
      .catch((error: unknown) => observer.trouble(error))
      .finally(() => {
        inHand.delete(entry.id);
        wake?.();
      });
    inHand.set(entry.id, work);
  }

  async function run(message: JobMessage): Promise<ReplyMessage | undefined> {
    const takenAt = sharedClockMs();
    const started = performance.now();
    const deadline = createDeadline();
    const timer = setTimeout(
      () => deadline.abort(new Error("the asker's deadline passed")),
      Math.min(MAX_TIMER_MS, Math.max(0, message.deadline - sharedClockMs())),
    );
    try {
      const { job } = message;
      // This vantage's time limits count from when it took the job, not from the asker's call: a job a
      // sibling took over, or one that waited in the stream, still gets this vantage's full time (and
      // would otherwise start "late" and be refused as our overload); the asker's deadline bounds it.
      const jobOptions = Object.assign({}, job.options, { timeoutsFrom: takenAt });
      const outcome =
        job.kind === "site-check"
          ? await options.runner.checkSite(job.raw, deadline.signal, jobOptions)
          : await options.runner.traceRedirects(job.raw, deadline.signal, jobOptions);
      // Nobody waits for a job its deadline ended.
      if (outcome.kind === "cancelled") return undefined;
      observer.ran(job.kind, (performance.now() - started) / 1_000);
      return { ok: true, outcome };
    } catch (error) {
      return { ok: false, reason: `the vantage's runner failed: ${messageOf(error)}` };
    } finally {
      clearTimeout(timer);
    }
  }

  async function send(message: JobMessage, reply: ReplyMessage): Promise<void> {
    const replyKey = keys.reply(message.dispatcher, message.request);
    const encoded = encodeReply(reply);
    const inline = encoded.length <= INLINE_REPLY_BYTES ? encoded.toString("base64") : "";
    await REPLY_SCRIPT(
      redis,
      [replyKey, keys.replies(message.dispatcher)],
      [options.vantage, encoded, options.replyTtlMs, message.request, options.repliesMaxLen, inline],
    );
  }

  const finishing = new Set<Promise<void>>();
  function finish(id: string): Promise<void> {
    const done = Promise.all([redis.xack(stream, WORKER_GROUP, id), redis.xdel(stream, id)]).then(
      () => undefined,
      (error: unknown) => observer.trouble(error),
    );
    finishing.add(done);
    void done.finally(() => finishing.delete(done));
    return done;
  }

  async function readLoop(): Promise<void> {
    let failures = 0;
    while (!stopped) {
      if (inHand.size >= options.maxJobs) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      try {
        const reply = await blocking.xreadgroup(
          "GROUP",
          WORKER_GROUP,
          options.consumer,
          "COUNT",
          options.maxJobs - inHand.size,
          "BLOCK",
          options.blockMs,
          "STREAMS",
          stream,
          ">",
        );
        failures = 0;
        for (const entry of readStreamEntries(reply)) take(entry);
      } catch (error) {
        if (stopped) return;
        failures += 1;
        if (messageOf(error).includes("NOGROUP")) await ensureGroup().catch(() => undefined);
        else observer.trouble(error);
        await pause(Math.min(50 * failures, 1_000), stopping);
      }
    }
  }

  // Keeps the jobs in hand fresh, takes over the idle ones of dead siblings, and reads the pending count.
  let ticking = false;
  async function claimTick(): Promise<void> {
    if (ticking) return;
    ticking = true;
    try {
      await claimOnce();
    } finally {
      ticking = false;
    }
  }

  async function claimOnce(): Promise<void> {
    const ids = [...inHand.keys()];
    if (ids.length > 0) await redis.xclaim(stream, WORKER_GROUP, options.consumer, 0, ...ids, "JUSTID");
    const free = options.maxJobs - inHand.size;
    if (free > 0 && !stopped) {
      const claimed: unknown = await redis.xautoclaim(stream, WORKER_GROUP, options.consumer, options.claimIdleMs, "0-0", "COUNT", free);
      if (Array.isArray(claimed)) for (const entry of readStreamEntries([[stream, claimed[1]]])) take(entry, true);
    }
    // An answered job is deleted from the stream, so the stream holds the waiting and the taken ones.
    const [summary, length] = await Promise.all([redis.xpending(stream, WORKER_GROUP) as Promise<unknown>, redis.xlen(stream)]);
    if (Array.isArray(summary) && typeof summary[0] === "number") observer.pending(Math.max(0, length - summary[0]), summary[0]);
  }

  const claimTimer = setInterval(
    () => {
      claimTick().catch((error: unknown) => observer.trouble(error));
    },
    Math.max(10, Math.floor(options.claimIdleMs / 3)),
  );
  const loop = ensureGroup()
    .catch((error: unknown) => observer.trouble(error))
    .then(readLoop);

  return {
    reachable: () =>
      redis.xlen(stream).then(
        () => true,
        () => false,
      ),
    stop: async () => {
      stopped = true;
      signalStop();
      clearInterval(claimTimer);
      wake?.();
      // A blocked read ends only with its connection. A job delivered with the read it ends stays pending and a sibling takes it over.
      disconnect(blocking);
      await loop;
      await Promise.all(inHand.values());
      await Promise.all(finishing);
      // Leave the group, unless a job delivered with the last read is still ours: a sibling takes that over first.
      const mine: unknown = await redis.xpending(stream, WORKER_GROUP, "-", "+", 1, options.consumer).catch(() => undefined);
      if (Array.isArray(mine) && mine.length === 0)
        await redis.xgroup("DELCONSUMER", stream, WORKER_GROUP, options.consumer).catch(() => undefined);
    },
  };
}
