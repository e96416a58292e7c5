import { deserialize, serialize } from "node:v8";
import type { SiteCheckOptions, TraceOptions } from "../../diagnostics/diagnostic-call.js";
import type { RedirectTraceOutcome } from "../../diagnostics/redirect-trace-result.js";
import type { SiteCheckOutcome } from "../../diagnostics/site-check-result.js";
import { isKeyId } from "./vantage-keys.js";
import type { VantageJob } from "../vantage-fanout.js";

// What crosses Redis, both ways, and the only place it is read. Anyone who can
// write to the Redis can write a job or an answer (docs/vantages.md), so both
// decoders are total: a value for every input, bounded in bytes, never a throw.

/** A job as it sits in a vantage's stream: the call, when nobody waits for it any more, and where its answer goes. */
export interface JobMessage {
  readonly job: VantageJob;
  /** Epoch ms on the shared clock; a job taken later is dropped. */
  readonly deadline: number;
  /** The instance that asked: its reply stream and reply keys are named by it. */
  readonly dispatcher: string;
  readonly request: string;
}

/** A vantage's answer as it sits in the reply key: the outcome, or why there is none. */
export type ReplyMessage =
  | { readonly ok: true; readonly outcome: SiteCheckOutcome | RedirectTraceOutcome }
  | { readonly ok: false; readonly reason: string };

/** A job's input and options are a URL and a few flags; anything larger is not ours. */
export const MAX_JOB_BYTES = 16 * 1024;
/** An outcome with details holds every request's headers (64 KiB each at most) and certificates; a reply past this is refused on both sides. */
export const MAX_REPLY_BYTES = 8 * 1024 * 1024;
const FORMAT = 1;
const MAX_OPTIONS = 16;
const MAX_OPTION_TEXT = 256;

export function encodeJob(message: JobMessage): string {
  const { job } = message;
  return JSON.stringify({
    v: FORMAT,
    kind: job.kind,
    raw: job.raw,
    options: job.options,
    deadline: message.deadline,
    dispatcher: message.dispatcher,
    request: message.request,
  });
}

export type Decoded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

export function decodeJob(text: string | Buffer | undefined): Decoded<JobMessage> {
  if (text === undefined) return bad("no job field");
  if (text.length > MAX_JOB_BYTES) return bad(`job of ${text.length} bytes, over ${MAX_JOB_BYTES}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.toString());
  } catch {
    return bad("job is not JSON");
  }
  if (!isRecord(parsed) || parsed.v !== FORMAT) return bad("job of an unknown format");
  const { kind, raw, options, deadline, dispatcher, request } = parsed;
  if (kind !== "site-check" && kind !== "trace") return bad("job of an unknown kind");
  if (typeof raw !== "string") return bad("job without an input");
  if (typeof deadline !== "number" || !Number.isFinite(deadline)) return bad("job without a deadline");
  if (typeof dispatcher !== "string" || !isKeyId(dispatcher) || typeof request !== "string" || !isKeyId(request))
    return bad("job without a valid reply address");
  const read = readOptions(options);
  if (!read.ok) return read;
  // Each kind's options are the same plain flags today; the kind decides which the runner reads.
  const job: VantageJob = kind === "site-check" ? { kind, raw, options: read.value } : { kind, raw, options: read.value };
  return { ok: true, value: { job, deadline, dispatcher, request } };
}

/**
 * The options as plain flags: the ones we know checked by type, any other
 * (an option added later, carried by a newer dispatcher) kept only when it is
 * a boolean, a finite number or a short text, so the runner reads nothing else.
 */
function readOptions(value: unknown): Decoded<SiteCheckOptions & TraceOptions> {
  if (value === undefined) return { ok: true, value: {} };
  if (!isRecord(value)) return bad("job options are not an object");
  const entries = Object.entries(value);
  if (entries.length > MAX_OPTIONS) return bad("job has too many options");
  const kept: Record<string, boolean | number | string> = {};
  for (const [name, option] of entries) {
    if (name === "__proto__" || name.length > 64) return bad("job option of an odd name");
    const known = KNOWN_OPTIONS[name];
    if (known !== undefined && typeof option !== known) return bad(`job option ${name} is not a ${known}`);
    if (
      typeof option === "boolean" ||
      (typeof option === "number" && Number.isFinite(option)) ||
      (typeof option === "string" && option.length <= MAX_OPTION_TEXT)
    )
      kept[name] = option;
    else if (option !== null) return bad(`job option ${name} of an odd value`);
  }
  return { ok: true, value: kept };
}

const KNOWN_OPTIONS: Readonly<Record<string, "boolean" | "number" | "string" | undefined>> = {
  details: "boolean",
  report: "boolean",
  timeoutsFrom: "number",
  userAgent: "string",
};

/** v8's serializer: the structured clone the probe threads already use for outcomes, so whatever an outcome holds crosses alike. */
export function encodeReply(message: ReplyMessage): Buffer {
  const encoded = serialize({ v: FORMAT, ...message });
  if (encoded.length <= MAX_REPLY_BYTES) return encoded;
  return serialize({ v: FORMAT, ok: false, reason: `answer of ${encoded.length} bytes, over ${MAX_REPLY_BYTES}` });
}

/**
 * Reads an answer: the size first, then v8's deserializer inside a catch
 * (it throws on malformed bytes), then the outcome's outer shape, which is
 * what the operation branches on. What is inside a result is the other
 * vantage's word, as the trust boundary says.
 */
export function decodeReply(bytes: Buffer, kind: VantageJob["kind"]): Decoded<ReplyMessage> {
  if (bytes.length > MAX_REPLY_BYTES) return bad(`answer of ${bytes.length} bytes, over ${MAX_REPLY_BYTES}`);
  let parsed: unknown;
  try {
    parsed = deserialize(bytes);
  } catch {
    return bad("answer is not a serialized value");
  }
  if (!isRecord(parsed) || parsed.v !== FORMAT) return bad("answer of an unknown format");
  if (parsed.ok === false)
    return { ok: true, value: { ok: false, reason: typeof parsed.reason === "string" ? parsed.reason.slice(0, 500) : "no reason given" } };
  if (parsed.ok !== true || !isOutcome(parsed.outcome, kind)) return bad("answer without an outcome");
  return { ok: true, value: { ok: true, outcome: parsed.outcome } };
}

function isOutcome(value: unknown, kind: VantageJob["kind"]): value is SiteCheckOutcome | RedirectTraceOutcome {
  if (!isRecord(value)) return false;
  switch (value.kind) {
    case "result":
      return (
        isRecord(value.result) &&
        (kind === "site-check"
          ? typeof value.result.status === "string"
          : typeof value.result.chainStatus === "string" && Array.isArray(value.result.chain))
      );
    case "refused":
      return isRecord(value.refusal) && typeof value.refusal.rule === "string";
    case "overloaded":
      return isRecord(value.overload) && typeof value.overload.why === "string";
    case "cancelled":
      return true;
    default:
      return false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function bad(reason: string): { readonly ok: false; readonly reason: string } {
  return { ok: false, reason };
}
