import { afterAll, beforeAll, expect, it } from "vitest";
import type { HopOutcome, Prober } from "../../../src/probe/hop-types.js";
import { createProber } from "../../../src/probe/prober.js";
import { USER_AGENT } from "../../../src/package-info.js";
import { startRawTarget, type RawTarget } from "../../fixtures/raw-targets.js";
import { seededRandom } from "../../fixtures/seeded-random.js";

/*
 * The exchange reads a head from the first read in place and copies only when
 * a head spans reads. Each head here arrives whole and in pieces (cut at
 * seeded places, each piece its own write a few milliseconds apart, so its own
 * read), and both must give the same status, fields and body prefix.
 */

const ANY_PORT = { kind: "fetch-safe" } as const;
const SEED = 0x5e17;
let prober: Prober;
let target: RawTarget;
/** What the next connection is sent, as pieces written one after another. */
let pieces: readonly string[] = [];

beforeAll(async () => {
  prober = createProber({ allowCidrs: ["127.0.0.0/8"], dnsServers: [], userAgent: USER_AGENT });
  target = await startRawTarget({ kind: "pieces", pieces: () => pieces, gapMs: 3 });
});

afterAll(async () => {
  await prober.close();
  await target.close();
});

async function fetchWith(parts: readonly string[]): Promise<HopOutcome> {
  pieces = parts;
  return prober.hop({ url: new URL(target.url), method: "GET", timeoutMs: 5_000, ports: ANY_PORT, bodyPrefixBytes: 64 });
}

function seen(outcome: HopOutcome): unknown {
  if (outcome.kind !== "response")
    return outcome.kind === "failure" ? outcome.failure.reason : outcome.kind === "refused" ? outcome.refusal.reason : outcome.overload.why;
  const { status, statusText, headers, bodyPrefix } = outcome.response;
  return { status, statusText, headers, body: bodyPrefix === null ? null : Buffer.from(bodyPrefix).toString("latin1") };
}

function cutAt(text: string, random: () => number, count: number): string[] {
  const cuts = [...new Set(Array.from({ length: count }, () => 1 + Math.floor(random() * (text.length - 1))))].sort((a, b) => a - b);
  return [0, ...cuts].map((start, index) => text.slice(start, cuts[index] ?? text.length));
}

const LONG_VALUE = "v".repeat(5_000);
const RESPONSES = [
  "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\nx-one: 1\r\n\r\nhello",
  "HTTP/1.1 404 Not Found\nserver: bare-lf\ncontent-length: 3\n\nnop",
  "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nset-cookie: a=1\r\nset-cookie: b=2\r\ncontent-length: 2\r\n\r\nok",
  // Longer than the 4 KiB the buffer starts at: a head in pieces grows it.
  `HTTP/1.1 200 OK\r\nx-long: ${LONG_VALUE}\r\ncontent-length: 4\r\n\r\nlong`,
];

it.each(RESPONSES.map((response, index) => [index, response] as const))(
  "response %i: the same in pieces as whole",
  async (index, response) => {
    const whole = seen(await fetchWith([response]));
    expect(whole).toMatchObject({ status: expect.any(Number) });
    const random = seededRandom(SEED + index);
    for (const count of [1, 3, 8]) {
      const parts = cutAt(response, random, count);
      expect(seen(await fetchWith(parts)), JSON.stringify(parts.map((part) => part.length))).toEqual(whole);
    }
    // Cut exactly after the blank line, and one byte at a time through the head's end.
    const headEnd = response.lastIndexOf("\n\n") >= 0 ? response.lastIndexOf("\n\n") + 2 : response.lastIndexOf("\r\n\r\n") + 4;
    expect(seen(await fetchWith([response.slice(0, headEnd), response.slice(headEnd)]))).toEqual(whole);
    const tail = response.slice(headEnd - 6, headEnd);
    expect(seen(await fetchWith([response.slice(0, headEnd - 6), ...tail.split(""), response.slice(headEnd)]))).toEqual(whole);
  },
  30_000,
);
