import { serialize } from "node:v8";
import { describe, expect, it } from "vitest";
import { decodeJob, decodeReply, encodeJob, encodeReply, MAX_REPLY_BYTES } from "../../../src/vantage/redis/job-codec.js";
import { seededRandom } from "../../fixtures/seeded-random.js";
import { CRAWLER_USER_AGENTS, crawlerUserAgent } from "../../../src/shared/user-agents.js";

// Whatever is in Redis may have been written by anyone who can write there:
// both decoders give a value for every input and never throw.
describe("the vantage job and answer codec", () => {
  it("round-trips a job, carrying only flags as options", () => {
    const message = {
      job: { kind: "trace", raw: "example.com", options: { details: true, timeoutsFrom: 1_700_000_000_000.5 } },
      deadline: 1_700_000_010_000,
      dispatcher: "abc_DEF-1",
      request: "req1",
    } as const;
    expect(decodeJob(encodeJob(message))).toEqual({ ok: true, value: message });
  });

  it("carries the User-Agent a call speaks as (issue 39); the diagnostic reads any other text as browser", () => {
    const message = {
      job: { kind: "site-check", raw: "http://x/", options: { details: true, userAgent: "googlebot" } },
      deadline: 1,
      dispatcher: "a",
      request: "b",
    } as const;
    expect(decodeJob(encodeJob(message))).toEqual({ ok: true, value: message });
    expect(crawlerUserAgent("googlebot")).toBe(CRAWLER_USER_AGENTS.googlebot);
    expect(crawlerUserAgent("yandexbot")).toBeUndefined();
  });

  it.each([
    ["not JSON", "{"],
    ["another format", JSON.stringify({ v: 2 })],
    ["an unknown kind", JSON.stringify({ v: 1, kind: "shell", raw: "x", deadline: 1, dispatcher: "a", request: "b" })],
    [
      "a reply address outside our keys",
      JSON.stringify({ v: 1, kind: "trace", raw: "x", deadline: 1, dispatcher: "}:x{sitediag:key", request: "b" }),
    ],
    [
      "a known option of the wrong type",
      JSON.stringify({ v: 1, kind: "trace", raw: "x", deadline: 1, dispatcher: "a", request: "b", options: { details: "yes" } }),
    ],
    [
      "a user agent that is no text",
      JSON.stringify({ v: 1, kind: "trace", raw: "x", deadline: 1, dispatcher: "a", request: "b", options: { userAgent: 2 } }),
    ],
    [
      "an object as an option",
      JSON.stringify({
        v: 1,
        kind: "trace",
        raw: "x",
        deadline: 1,
        dispatcher: "a",
        request: "b",
        options: { limits: { siteTimeoutMs: 1e9 } },
      }),
    ],
    [
      "a prototype option",
      '{"v":1,"kind":"trace","raw":"x","deadline":1,"dispatcher":"a","request":"b","options":{"__proto__":{"details":true}}}',
    ],
    ["an infinite deadline", '{"v":1,"kind":"trace","raw":"x","deadline":1e999,"dispatcher":"a","request":"b"}'],
    ["too many bytes", "x".repeat(20_000)],
  ])("refuses a job with %s", (_what, text) => {
    expect(decodeJob(text).ok).toBe(false);
  });

  it("round-trips an outcome, and reads an answer of the wrong kind or shape as no answer", () => {
    const outcome = { kind: "result", result: { status: "up", statusCode: 200, requestedUrl: "http://x/" } } as const;
    // The codec checks the outer shape only: a site-check result is a few fields here.
    expect(decodeReply(encodeReply({ ok: true, outcome: outcome as never }), "site-check")).toMatchObject({
      ok: true,
      value: { ok: true, outcome },
    });
    expect(decodeReply(encodeReply({ ok: true, outcome: outcome as never }), "trace").ok).toBe(false);
    expect(decodeReply(serialize({ v: 1, ok: true, outcome: { kind: "result", result: null } }), "site-check").ok).toBe(false);
    expect(decodeReply(encodeReply({ ok: false, reason: "boom" }), "trace")).toEqual({ ok: true, value: { ok: false, reason: "boom" } });
  });

  it("refuses an answer over the size bound on both sides", () => {
    const huge = { kind: "result", result: { status: "up", filler: "x".repeat(MAX_REPLY_BYTES) } };
    const encoded = encodeReply({ ok: true, outcome: huge as never });
    expect(encoded.length).toBeLessThan(1_000);
    expect(decodeReply(encoded, "site-check")).toMatchObject({ ok: true, value: { ok: false } });
    expect(decodeReply(Buffer.alloc(MAX_REPLY_BYTES + 1), "site-check").ok).toBe(false);
  });

  it("gives a value for 5,000 random and mutated inputs, never a throw", () => {
    const random = seededRandom(31);
    const valid = encodeReply({
      ok: true,
      outcome: { kind: "refused", refusal: { rule: "scheme", code: "input_scheme", reason: "no" } } as never,
    });
    const job = Buffer.from(
      encodeJob({ job: { kind: "site-check", raw: "http://x/", options: {} }, deadline: 1, dispatcher: "a", request: "b" }),
    );
    for (let round = 0; round < 5_000; round += 1) {
      const base = round % 2 === 0 ? valid : job;
      const bytes =
        round % 4 < 2
          ? Buffer.from(base)
          : Buffer.from(Array.from({ length: Math.floor(random() * 64) }, () => Math.floor(random() * 256)));
      for (let flips = 0; flips < 3; flips += 1) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
      expect(() => decodeReply(bytes, "site-check")).not.toThrow();
      expect(() => decodeJob(bytes)).not.toThrow();
      expect(() => decodeJob(bytes.toString("latin1"))).not.toThrow();
    }
  });
});
