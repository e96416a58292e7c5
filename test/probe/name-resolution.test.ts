import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DNSSEC_NOT_READ } from "../../src/probe/dnssec-query.js";
import { CNAME_WALK_MS, MAX_CNAME_LINKS, walkCnameChain } from "../../src/probe/cname-chain.js";
import type { HopOutcome, Prober } from "../../src/probe/hop-types.js";
import { MAX_ANSWERS_PER_FAMILY, type NameResolution, nameResolutionOf } from "../../src/probe/name-resolution.js";
import { createProber } from "../../src/probe/prober.js";
import { USER_AGENT } from "../../src/package-info.js";
import { startDnsServer, type DnsServer } from "../fixtures/dns-server.js";
import { startRawTarget, type RawTarget } from "../fixtures/raw-targets.js";
import { until } from "../fixtures/until.js";

const ANY_PORT = { kind: "fetch-safe" } as const;
let dns: DnsServer;
let prober: Prober;
let target: RawTarget;
let dir: string;
let hostsFile: string;

beforeAll(async () => {
  dns = await startDnsServer();
  target = await startRawTarget({ kind: "delayed", delayMs: 0 }, "127.0.0.1");
  dir = mkdtempSync(join(tmpdir(), "sitediag-names-"));
  hostsFile = join(dir, "hosts");
  writeFileSync(hostsFile, "127.0.0.1 listed.test\n");
  prober = createProber({ allowCidrs: ["127.0.0.1/32"], dnsServers: [dns.server], hostsFile, userAgent: USER_AGENT });
});

afterAll(async () => {
  await prober.close();
  await Promise.all([target.close(), dns.close()]);
  rmSync(dir, { recursive: true, force: true });
});

function hop(host: string, describeResolution = true, timeoutMs = 5_000): Promise<HopOutcome> {
  return prober.hop({ url: new URL(`http://${host}:${target.port}/`), method: "GET", timeoutMs, ports: ANY_PORT, describeResolution });
}

/** The resolution a hop carries, whatever its kind; throws when it has none. */
function resolutionOf(outcome: HopOutcome): NameResolution {
  const found =
    outcome.kind === "response"
      ? outcome.response.resolution
      : outcome.kind === "failure"
        ? outcome.trace.resolution
        : outcome.kind === "refused"
          ? outcome.resolution
          : undefined;
  if (found === undefined) throw new Error(`no resolution on ${JSON.stringify(outcome)}`);
  return found;
}

const CONFIGURED = () => ({ kind: "configured", servers: [dns.server] });

describe("what a name resolved to", () => {
  it("the CNAME chain, each answer with its TTL, the servers asked, and the DNS phase's time", async () => {
    dns.answer("www.chain.test", { cname: "cdn.chain.test", ttl: 600 });
    dns.answer("cdn.chain.test", { cname: "edge.chain.test", ttl: 300 });
    dns.answer("edge.chain.test", { a: ["127.0.0.1"], ttl: 60 });
    const outcome = await hop("www.chain.test");
    if (outcome.kind !== "response") throw new Error(JSON.stringify(outcome));
    expect(outcome.response.resolution).toEqual({
      name: "www.chain.test",
      source: CONFIGURED(),
      cnameChain: ["cdn.chain.test", "edge.chain.test"],
      cnameChainEnd: "complete",
      // c-ares gives a CNAME answer's records the smallest TTL along the chain: how long a cache keeps the answer.
      answers: [{ address: "127.0.0.1", family: 4, ttl: 60 }],
      answersOmitted: 0,
      timeMs: outcome.response.timings.dnsMs,
      code: null,
      rcode: null,
      // Not the first host's: no DO query asked (test/probe/dnssec-query.test.ts).
      dnssec: "unknown",
      extendedErrors: [],
    });
    expect(outcome.response.timings.dnsMs).not.toBeNull();
  });

  it("the chain is asked after both families were answered: outside the DNS phase", async () => {
    dns.answer("www.after.test", { cname: "edge.after.test" });
    dns.answer("edge.after.test", { a: ["127.0.0.1"] });
    const from = dns.queries.length;
    resolutionOf(await hop("www.after.test"));
    const asked = dns.queries.slice(from).map(({ name, type }) => `${type} ${name}`);
    expect(asked.slice(0, 2).sort()).toEqual(["A www.after.test", "AAAA www.after.test"]);
    expect(asked.slice(2)).toEqual(["CNAME www.after.test", "CNAME edge.after.test"]);
  });

  it("without details' flag nothing of the lookup is kept and no CNAME query is sent", async () => {
    dns.answer("plain.test", { a: ["127.0.0.1"], ttl: 30 });
    const from = dns.queries.length;
    const outcome = await hop("plain.test", false);
    expect(outcome.kind === "response" && outcome.response.resolution).toBeUndefined();
    expect(dns.queries.slice(from).some(({ type }) => type === "CNAME")).toBe(false);
  });

  it("a hosts-file answer names the file, has no TTL and asks no server", async () => {
    const from = dns.queries.length;
    expect(resolutionOf(await hop("listed.test"))).toMatchObject({
      source: { kind: "hosts_file", path: hostsFile },
      cnameChain: [],
      cnameChainEnd: "not_asked",
      answers: [{ address: "127.0.0.1", family: 4, ttl: null }],
    });
    expect(dns.queries.length).toBe(from);
  });

  it("a refused non-public answer still says what the name resolved to", async () => {
    dns.answer("private.test", { a: ["10.1.2.3"] });
    const outcome = await hop("private.test");
    expect(outcome.kind).toBe("refused");
    expect(resolutionOf(outcome)).toMatchObject({ answers: [{ address: "10.1.2.3", family: 4, ttl: 0 }], code: null, rcode: null });
  });

  it("an IP-literal host has no resolution", async () => {
    const outcome = await prober.hop({
      url: new URL(`http://127.0.0.1:${target.port}/`),
      method: "GET",
      timeoutMs: 5_000,
      ports: ANY_PORT,
      describeResolution: true,
    });
    expect(outcome.kind === "response" && outcome.response.resolution).toBeUndefined();
  });
});

describe("failures: the table's code beside the server's rcode", () => {
  it.each([
    ["nxdomain", "nx.test", "dns_no_such_host", "NXDOMAIN"],
    ["servfail", "sf.test", "dns_server_failure", "SERVFAIL"],
    ["refused", "rf.test", "dns_query_refused", "REFUSED"],
  ] as const)("%s", async (answer, name, code, rcode) => {
    dns.answer(name, answer);
    const outcome = await hop(name);
    expect(outcome.kind).toBe("failure");
    const resolution = resolutionOf(outcome);
    expect(resolution).toMatchObject({ name, source: CONFIGURED(), answers: [], code, rcode });
    if (outcome.kind === "failure") expect(resolution.timeMs).toBe(outcome.trace.timings.dnsMs);
  });

  it("no data: NOERROR, dns_no_address", async () => {
    dns.answer("nodata.test", {});
    expect(resolutionOf(await hop("nodata.test"))).toMatchObject({ code: "dns_no_address", rcode: "NOERROR" });
  });

  it("silence: dns_timeout and no rcode", async () => {
    dns.answer("quiet.test", "never");
    expect(resolutionOf(await hop("quiet.test", true, 400))).toMatchObject({ code: "dns_timeout", rcode: null, answers: [] });
  });

  it("a dangling CNAME: the chain to the name that does not exist", async () => {
    dns.answer("www.dangling.test", { cname: "gone.dangling.test" });
    dns.answer("gone.dangling.test", "nxdomain");
    expect(resolutionOf(await hop("www.dangling.test"))).toMatchObject({
      cnameChain: ["gone.dangling.test"],
      cnameChainEnd: "complete",
      code: "dns_no_such_host",
      rcode: "NXDOMAIN",
    });
  });
});

describe("the chain is bounded", () => {
  it("a loop ends where a name comes back", async () => {
    dns.answer("a.loop.test", { cname: "b.loop.test" });
    dns.answer("b.loop.test", { cname: "a.loop.test" });
    expect(resolutionOf(await hop("a.loop.test"))).toMatchObject({
      cnameChain: ["b.loop.test", "a.loop.test"],
      cnameChainEnd: "loop",
      rcode: "SERVFAIL",
    });
  });

  it("a 200-link loop: MAX_CNAME_LINKS links and too_long, after at most one query more", async () => {
    for (let i = 0; i < 200; i++) dns.answer(`l${i}.ring.test`, { cname: `l${(i + 1) % 200}.ring.test` });
    const from = dns.queries.length;
    const resolution = resolutionOf(await hop("l0.ring.test"));
    expect(resolution.cnameChain).toEqual(Array.from({ length: MAX_CNAME_LINKS }, (_, i) => `l${i + 1}.ring.test`));
    expect(resolution.cnameChainEnd).toBe("too_long");
    expect(dns.queries.slice(from).filter(({ type }) => type === "CNAME")).toHaveLength(MAX_CNAME_LINKS + 1);
  });

  it("a server that drops CNAME queries costs the walk at most CNAME_WALK_MS, and the hop keeps its answer", async () => {
    dns.answer("www.dropped.test", { a: ["127.0.0.1"] });
    dns.dropQueries("CNAME");
    try {
      const started = performance.now();
      const outcome = await hop("www.dropped.test", true, CNAME_WALK_MS * 20);
      const wall = performance.now() - started;
      if (outcome.kind !== "response") throw new Error(JSON.stringify(outcome));
      expect(resolutionOf(outcome)).toMatchObject({ cnameChain: [], cnameChainEnd: "failed", answers: [{ address: "127.0.0.1" }] });
      // The hop waited for the walk, and none of that wait is in its timings: not in dns, not in its total.
      expect(wall).toBeGreaterThanOrEqual(CNAME_WALK_MS * 0.9);
      expect(outcome.response.timings.totalMs).toBeLessThan(wall / 2);
    } finally {
      dns.dropQueries(null);
    }
  });
});

describe("hostile answers give bounded, escaped fields", () => {
  it("500 A records: the first MAX_ANSWERS_PER_FAMILY, the rest counted", async () => {
    const many = ["127.0.0.1", ...Array.from({ length: 499 }, (_, i) => `127.0.${1 + (i >> 8)}.${i & 255}`)];
    dns.answer("many.test", { a: many, ttl: 5 });
    const outcome = await hop("many.test");
    // Refused: the other 499 are outside the allowed 127.0.0.1/32, and every answer is judged.
    expect(outcome.kind).toBe("refused");
    const resolution = resolutionOf(outcome);
    expect(resolution.answers).toHaveLength(MAX_ANSWERS_PER_FAMILY);
    expect(resolution.answers[0]).toEqual({ address: "127.0.0.1", family: 4, ttl: 5 });
    expect(resolution.answersOmitted).toBe(500 - MAX_ANSWERS_PER_FAMILY);
  });

  it("odd bytes and a name past 255 bytes in a CNAME target", async () => {
    const long = Array.from({ length: 5 }, (_, i) => `${String(i)}${"x".repeat(62)}`).join(".");
    dns.answer("odd.test", { cname: "a\u001b[31m\u202eb.odd.test" });
    dns.answer("long.test", { cname: `${long}.test` });
    for (const name of ["odd.test", "long.test"]) {
      const resolution = resolutionOf(await hop(name));
      for (const link of resolution.cnameChain) {
        expect(link.length).toBeLessThanOrEqual(320);
        // eslint-disable-next-line no-control-regex
        expect(link).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
      }
      expect(resolution.cnameChain.length).toBeLessThanOrEqual(1);
    }
    // c-ares itself refuses a name whose escaped form runs long (as a malformed answer): the chain is unknown, the field empty.
    dns.answer("dense.test", { cname: `${Array.from({ length: 3 }, () => "\u0001".repeat(30)).join(".")}.test` });
    expect(resolutionOf(await hop("dense.test"))).toMatchObject({ cnameChain: [], cnameChainEnd: "failed" });
    // c-ares writes the escape byte and the override's UTF-8 bytes as \DDD: shown, never acted on.
    expect(resolutionOf(await hop("odd.test")).cnameChain[0]).toBe("a\\027[31m\\226\\128\\174b.odd.test");
  });
});

describe("the record is total and bounded whatever it is handed", () => {
  it("a chain of long names with control bytes, nine long servers, odd TTLs", () => {
    const record = nameResolutionOf(
      "x.test",
      {
        ok: true,
        addresses: [{ address: "192.0.2.1", family: 4 }],
        evidence: {
          source: { kind: "configured", servers: Array.from({ length: 9 }, (_, i) => `${String(i)}${"\u001b".repeat(400)}`) },
          records: [
            { address: "192.0.2.1", family: 4, ttl: -5 },
            { address: "192.0.2.2", family: 4, ttl: 1.5 },
            { address: "2001:db8::1", family: 6, ttl: 2 ** 40 },
          ],
          rcode: null,
        },
      },
      { links: Array.from({ length: 12 }, () => `\u202e${"y".repeat(1_000)}`), end: "too_long" },
      DNSSEC_NOT_READ,
      1.5,
      null,
    );
    expect(record?.cnameChain).toHaveLength(MAX_CNAME_LINKS);
    for (const text of [...(record?.cnameChain ?? []), ...(record?.source.kind === "configured" ? record.source.servers : [])]) {
      expect(text.length).toBeLessThanOrEqual(320);
      // eslint-disable-next-line no-control-regex
      expect(text).not.toMatch(/[\u0000-\u001f\u202e]/);
    }
    expect(record?.source.kind === "configured" && record.source.servers).toHaveLength(8);
    expect(record?.answers.map(({ ttl }) => ttl)).toEqual([0, 0, 2_147_483_647]);
  });
});

describe("the walk ends with the hop", () => {
  it("a walk waiting on a server that drops CNAME queries ends when the hop's signal does, well before its own limit", async () => {
    dns.answer("www.cancel.test", { a: ["127.0.0.1"] });
    dns.dropQueries("CNAME");
    try {
      // The walk's own limit, measured here: what an unended walk against this server costs.
      const started = performance.now();
      expect(await walkCnameChain("www.cancel.test", [dns.server], new AbortController().signal)).toEqual({ links: [], end: "failed" });
      const unended = performance.now() - started;
      const hop = new AbortController();
      const from = dns.queries.length;
      const walking = walkCnameChain("www.cancel.test", [dns.server], hop.signal);
      await until(() => (dns.queries.slice(from).some(({ type }) => type === "CNAME") ? true : undefined), 5_000);
      // Timed from the abort: how long the query took to reach the server is the machine's, not the walk's
      // (a CI line beside a compile took 578 ms from the ask, more than half the walk's own limit).
      const aborted = performance.now();
      hop.abort();
      expect(await walking).toEqual({ links: [], end: "failed" });
      expect(performance.now() - aborted).toBeLessThan(unended / 2);
    } finally {
      dns.dropQueries(null);
    }
  });
});
