import { decodeReply, MAX_REPLY_BYTES, type Decoded, type ReplyMessage } from "./job-codec.js";
import { readStreamEntries } from "./stream-reply.js";
import type { VantageKeys } from "./vantage-keys.js";
import { disconnect, messageOf, pause, scriptOf, type RedisClient } from "./vantage-redis.js";
import type { VantageJob } from "../vantage-fanout.js";

// Where a dispatching instance hears its answers. A worker writes an answer
// into the request's reply key (a hash, a field per vantage, with a short
// expiry) and adds a small notice (request, vantage) to this instance's one
// reply stream, both in one script. One loop reads that stream with XREAD
// BLOCK on one connection and fetches each noticed answer on the shared
// command connection: a thousand requests in flight wait on the same two
// connections, not one blocked connection each (a BLPOP per request would
// need as many connections as requests waiting). An answer whose request is
// no longer waited for is never fetched, and expires with its key.

export type ReplyListener = (vantage: string, reply: Decoded<ReplyMessage>) => void;

export interface ReplyInbox {
  /** Hears the answers to `request` until the returned function is called. */
  expect(request: string, kind: VantageJob["kind"], listener: ReplyListener): () => void;
  /** Stops the loop and ends its connection. */
  close(): Promise<void>;
}

// The size is checked before the value leaves Redis: an oversized answer costs no transfer.
const READ_SCRIPT = scriptOf(`
if redis.call('HSTRLEN', KEYS[1], ARGV[1]) > tonumber(ARGV[2]) then return -1 end
return redis.call('HGET', KEYS[1], ARGV[1])
`);

const MAX_NOTICES_PER_READ = 1_000;
/** An answer in its notice is small (the worker inlines up to 2 KiB); a longer one is fetched from the key, size-checked. */
const MAX_INLINE_CHARS = 4 * 1024;

export function openReplyInbox(
  redis: RedisClient,
  blocking: RedisClient,
  keys: VantageKeys,
  dispatcher: string,
  blockMs: number,
  onTrouble: (error: unknown) => void,
): ReplyInbox {
  const stream = keys.replies(dispatcher);
  const waiting = new Map<string, { readonly kind: VantageJob["kind"]; readonly listener: ReplyListener }>();
  let stopped = false;
  let signalStop: () => void = () => undefined;
  const stopping = new Promise<void>((resolve) => (signalStop = resolve));

  async function fetchReply(request: string, vantage: string, inline: string | undefined): Promise<void> {
    const wanted = waiting.get(request);
    if (wanted === undefined) return;
    if (inline !== undefined && inline.length <= MAX_INLINE_CHARS)
      return wanted.listener(vantage, decodeReply(Buffer.from(inline, "base64"), wanted.kind));
    let decoded: Decoded<ReplyMessage>;
    try {
      const value = await READ_SCRIPT(redis, [keys.reply(dispatcher, request)], [vantage, MAX_REPLY_BYTES]);
      if (Buffer.isBuffer(value)) decoded = decodeReply(value, wanted.kind);
      else decoded = { ok: false, reason: value === -1 ? `answer over ${MAX_REPLY_BYTES} bytes` : "answer expired before it was read" };
    } catch (error) {
      decoded = { ok: false, reason: `answer could not be read: ${messageOf(error)}` };
    }
    waiting.get(request)?.listener(vantage, decoded);
  }

  async function loop(): Promise<void> {
    // The stream is named by this instance's fresh id: nothing in it predates this loop.
    let lastId = "0-0";
    let failures = 0;
    while (!stopped) {
      try {
        const reply = await blocking.xread("COUNT", MAX_NOTICES_PER_READ, "BLOCK", blockMs, "STREAMS", stream, lastId);
        failures = 0;
        for (const entry of readStreamEntries(reply)) {
          lastId = entry.id;
          const request = entry.fields.get("r");
          const vantage = entry.fields.get("v");
          if (request !== undefined && vantage !== undefined) void fetchReply(request, vantage, entry.fields.get("a"));
        }
      } catch (error) {
        if (stopped) return;
        failures += 1;
        onTrouble(error);
        await pause(Math.min(50 * failures, 1_000), stopping);
      }
    }
  }

  const running = loop();
  return {
    expect: (request, kind, listener) => {
      waiting.set(request, { kind, listener });
      return () => waiting.delete(request);
    },
    close: async () => {
      stopped = true;
      signalStop();
      disconnect(blocking);
      await running;
    },
  };
}
