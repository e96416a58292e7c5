import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticEnv } from "../../src/diagnostics/diagnostic-call.js";
import { CHECK_COOKIES, REDIRECT_TRACE } from "../../src/shared/limits.js";
import type { Prober } from "../../src/probe/hop-types.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { type RawTarget, startRawTarget } from "../fixtures/raw-targets.js";
import { loopbackProber, traceEnv, traceResult } from "../fixtures/test-env.js";

/**
 * Issue 28, row 5: a same-origin trace whose every answer sets a flood of
 * cookies. Before, the jar kept them all: the next request's Cookie header
 * grew with every hop (1.5 MiB by the 21st at 7,000 lines an answer), and
 * with it the memory and CPU of the check. The target here is a raw one: it
 * takes a request head of any size, as the attacker's would, and shows what
 * it received. Scaled down from the issue (1,500 lines an answer, below the
 * field counts a head reader may refuse) but above every bound of the jar.
 */
const HOST = "i.h.g.f.test";
// Host-only, and three parent domains: 4 x 50 per domain passes the 180 in all.
const DOMAINS = ["", "; domain=h.g.f.test", "; domain=.g.f.test", "; domain=f.test"] as const;
const LINES = 1_500;
/** Live heap growth allowed while the trace runs, in MiB (measured in the commit that set it). */
const LIVE_HEAP_BOUND_MIB = 8;
const HOPS = REDIRECT_TRACE.maxRedirects + 1;

interface Received {
  readonly path: string;
  readonly cookie: string;
  /** Heap in use when the request arrived (this process runs both the trace and the target). */
  readonly heapUsed: number;
}

let dns: DnsServer;
let target: RawTarget;
let prober: Prober;
let env: DiagnosticEnv;
const received: Received[] = [];

/** Each answer: one cookie too large to keep, then LINES small ones spread over the four domains. */
function floodAnswer(hop: number): string {
  const lines = [`set-cookie: h${hop}huge=${"x".repeat(CHECK_COOKIES.maxCookieBytes)}`];
  for (let index = 0; index < LINES; index++)
    lines.push(`set-cookie: h${hop}d${index % DOMAINS.length}n${index}=1${DOMAINS[index % DOMAINS.length] ?? ""}`);
  const end = hop === HOPS ? "HTTP/1.1 200 OK" : `HTTP/1.1 302 Found\r\nlocation: /c/${hop + 1}`;
  return `${end}\r\n${lines.join("\r\n")}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`;
}

function cookieOf(head: string): string {
  for (const line of head.split("\r\n")) if (line.toLowerCase().startsWith("cookie:")) return line.slice("cookie:".length).trim();
  return "";
}

/** A full collection, then the heap in use: what is live, whatever the collector's timing. */
const collect = (() => {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
})();
function liveHeap(): number {
  collect();
  return process.memoryUsage().heapUsed;
}
const LIVE_HEAP_BOUND_BYTES = LIVE_HEAP_BOUND_MIB * 1024 * 1024;

beforeAll(async () => {
  dns = await startDnsServer();
  dns.answer(HOST, { a: ["127.0.0.1"] });
  target = await startRawTarget({
    kind: "bytes",
    answer: (path, head) => {
      received.push({ path, cookie: cookieOf(head), heapUsed: liveHeap() });
      const hop = Number(/^\/c\/(\d+)$/.exec(path)?.[1] ?? "0");
      return Buffer.from(hop >= 1 && hop <= HOPS ? floodAnswer(hop) : "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n", "latin1");
    },
  });
  prober = loopbackProber({ dnsServers: [dns.server] });
  // The contract's own trace limits: the flood must end well inside them, not be cut by them.
  env = traceEnv(prober, {
    tracePorts: [target.port],
    traceHopTimeoutMs: REDIRECT_TRACE.hopTimeoutMs,
    traceTotalTimeoutMs: REDIRECT_TRACE.totalTimeoutMs,
  });
});

afterAll(async () => {
  await prober.close();
  await target.close();
  await dns.close();
});

const pairs = (cookie: string) => (cookie === "" ? [] : cookie.split("; "));

describe("a Set-Cookie flood on every hop of a trace", () => {
  it("ends normally, every Cookie header within 8 KiB, the jar within 50 a domain and 180 in all", async () => {
    const heapBefore = liveHeap();
    const result = await traceResult(`http://${HOST}:${target.port}/c/1`, env);

    expect(result).toMatchObject({ chainStatus: "redirects_detected", redirects: HOPS - 1, finalStatus: 200 });
    expect(received.map((request) => request.path)).toEqual(Array.from({ length: HOPS }, (_, index) => `/c/${index + 1}`));
    expect(received[0]?.cookie).toBe("");
    for (const { cookie } of received.slice(1)) {
      expect(cookie.length).toBeGreaterThan(0);
      expect(cookie.length).toBeLessThanOrEqual(CHECK_COOKIES.maxHeaderBytes);
      const names = pairs(cookie).map((pair) => pair.split("=", 1)[0] ?? "");
      // A cookie whose name and value pass 4 KiB is never kept.
      expect(names.filter((name) => name.endsWith("huge"))).toEqual([]);
      expect(names.length).toBeLessThanOrEqual(CHECK_COOKIES.total);
      for (let domain = 0; domain < DOMAINS.length; domain++) {
        expect(names.filter((name) => name.includes(`d${domain}n`)).length).toBeLessThanOrEqual(CHECK_COOKIES.perDomain);
      }
    }
    // Small cookies: the jar's own bound (180 in all), not the header's, is what the last request shows.
    expect(pairs(received.at(-1)?.cookie ?? "").length).toBe(CHECK_COOKIES.total);
    // Count-based: what the check sent in Cookie headers over the whole trace is bounded by hops x 8 KiB.
    expect(received.reduce((sum, request) => sum + request.cookie.length, 0)).toBeLessThanOrEqual(HOPS * CHECK_COOKIES.maxHeaderBytes);
    // What the trace holds live as each request arrives (after a full collection, so neither this file's
    // garbage nor another's in the same worker counts): the jar and what it made. Generous: see the commit.
    const heapGrowth = Math.max(...received.map((request) => request.heapUsed)) - heapBefore;
    expect(heapGrowth).toBeLessThan(LIVE_HEAP_BOUND_BYTES);
  });
});
