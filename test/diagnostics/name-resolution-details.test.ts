import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticEnv } from "../../src/diagnostics/diagnostic-call.js";
import type { Prober } from "../../src/probe/hop-types.js";
import { startDnsServer, type DnsServer } from "../fixtures/dns-server.js";
import { startTraceTarget, type TraceTarget } from "../fixtures/trace-targets.js";
import { checkedResult, loopbackProber, REPORTED, traceEnv, traceResult } from "../fixtures/test-env.js";

// details.resolutions: each lookup once, referenced by index from the requests that used it.
let dns: DnsServer;
let target: TraceTarget;
let prober: Prober;
let env: DiagnosticEnv;

beforeAll(async () => {
  dns = await startDnsServer();
  target = await startTraceTarget();
  prober = loopbackProber({ dnsServers: [dns.server] });
  env = traceEnv(prober, { tracePorts: [target.port], siteTimeoutMs: 5_000, traceHopTimeoutMs: 3_000, traceTotalTimeoutMs: 10_000 });
});

afterAll(async () => {
  await prober.close();
  await Promise.all([target.close(), dns.close()]);
});

const at = (host: string, path: string) => `http://${host}:${target.port}${path}`;
const DETAILS = { details: true } as const;

describe("is-site-down", () => {
  it("three requests to one host: one resolution, with its chain and TTL, used by all three", async () => {
    dns.answer("www.one.test", { cname: "edge.one.test", ttl: 900 });
    dns.answer("edge.one.test", { a: ["127.0.0.1"], ttl: 120 });
    target.route("/one/a", { kind: "redirect", status: 301, location: at("www.one.test", "/one/b") });
    target.route("/one/b", { kind: "redirect", status: 302, location: "/one/c" });
    target.route("/one/c", { kind: "status", status: 200 });
    const result = await checkedResult(at("www.one.test", "/one/a"), env, DETAILS);
    const details = result.details;
    if (details === undefined) throw new Error("no details");
    expect(details.requests.map((request) => request.resolution)).toEqual([0, 0, 0]);
    expect(details.resolutions).toEqual([
      {
        name: "www.one.test",
        source: { kind: "configured", servers: [dns.server] },
        cnameChain: ["edge.one.test"],
        cnameChainEnd: "complete",
        answers: [{ address: "127.0.0.1", family: 4, ttl: 120 }],
        answersOmitted: 0,
        // The first request's lookup is the one shown: its DNS phase.
        timeMs: details.requests[0]?.timings.dnsMs,
        code: null,
        rcode: null,
        // The first host's DNSSEC, read with one more query: the fixture sets no AD here.
        dnssec: "unvalidated",
        extendedErrors: [],
      },
    ]);
  });

  it("a redirect to a host that does not exist: its resolution has the code and the rcode, and its failed request points at it", async () => {
    dns.answer("from.nx.test", { a: ["127.0.0.1"] });
    dns.answer("gone.nx.test", "nxdomain");
    target.route("/nx", { kind: "redirect", status: 301, location: at("gone.nx.test", "/") });
    const result = await checkedResult(at("from.nx.test", "/nx"), env, DETAILS);
    expect(result).toMatchObject({ status: "down", failedStage: "dns", details: { code: "dns_no_such_host" } });
    expect(result.details?.requests.map((request) => [request.failure?.code ?? null, request.resolution])).toEqual([
      [null, 0],
      ["dns_no_such_host", 1],
    ]);
    expect(result.details?.resolutions[1]).toMatchObject({
      name: "gone.nx.test",
      answers: [],
      code: "dns_no_such_host",
      rcode: "NXDOMAIN",
    });
  });

  it("without details no CNAME is asked: a plain check sends only its A and AAAA queries", async () => {
    dns.answer("plain.one.test", { a: ["127.0.0.1"] });
    target.route("/plain", { kind: "status", status: 200 });
    const from = dns.queries.length;
    expect(await checkedResult(at("plain.one.test", "/plain"), env)).toMatchObject({ status: "up" });
    expect(
      dns.queries
        .slice(from)
        .map(({ type }) => type)
        .sort(),
    ).toEqual(["A", "AAAA"]);
  });
});

describe("redirect-check", () => {
  it("HEAD and GET of one host, then another host: one entry per host, in the order requests used them", async () => {
    dns.answer("a.two.test", { a: ["127.0.0.1"], ttl: 60 });
    dns.answer("b.two.test", { a: ["127.0.0.1"], ttl: 30 });
    // HEAD refused with 405: the position is asked again with GET, which resolves the name again.
    target.route("/two/a", {
      kind: "head-status",
      headStatus: 405,
      then: { kind: "redirect", status: 301, location: at("b.two.test", "/two/b") },
    });
    target.route("/two/b", { kind: "status", status: 200 });
    const result = await traceResult(at("a.two.test", "/two/a"), env, DETAILS);
    expect(result.details?.requests.map((request) => [request.method, new URL(request.url).hostname, request.resolution])).toEqual([
      ["HEAD", "a.two.test", 0],
      ["GET", "a.two.test", 0],
      ["HEAD", "b.two.test", 1],
      // The final page's extra GET, on the same host.
      ["GET", "b.two.test", 1],
    ]);
    expect(result.details?.resolutions.map(({ name, answers }) => [name, answers])).toEqual([
      ["a.two.test", [{ address: "127.0.0.1", family: 4, ttl: 60 }]],
      ["b.two.test", [{ address: "127.0.0.1", family: 4, ttl: 30 }]],
    ]);
  });

  it("a host whose answer changed between hops gets a second entry: no request points at an answer it did not get", async () => {
    // Every hop resolves its own name (the policy judges each hop's answers); 127.0.0.2 is loopback too, nothing listens there.
    dns.answer("flip.two.test", { a: ["127.0.0.1"] }, { a: ["127.0.0.2"] });
    target.route("/flip/a", { kind: "redirect", status: 301, location: "/flip/b" });
    const result = await traceResult(at("flip.two.test", "/flip/a"), env, DETAILS);
    expect(result.details?.requests.map((request) => request.resolution)).toEqual([0, 1]);
    expect(result.details?.resolutions.map(({ name, answers }) => [name, answers.map(({ address }) => address)])).toEqual([
      ["flip.two.test", ["127.0.0.1"]],
      ["flip.two.test", ["127.0.0.2"]],
    ]);
  });

  it("a redirect to a name that resolves to a non-public address: the refused lookup is shown, and the report's stopped position points at it", async () => {
    dns.answer("from.meta.test", { a: ["127.0.0.1"] });
    dns.answer("metadata.meta.test", { a: ["169.254.169.254"] });
    target.route("/meta", { kind: "redirect", status: 302, location: `http://metadata.meta.test:${target.port}/latest/` });
    const api = await traceResult(at("from.meta.test", "/meta"), env, DETAILS);
    expect(api.details?.requests.map((request) => request.resolution)).toEqual([0]);
    expect(api.details?.resolutions[1]).toMatchObject({
      name: "metadata.meta.test",
      answers: [{ address: "169.254.169.254" }],
      code: null,
    });
    const reported = await traceResult(at("from.meta.test", "/meta"), env, REPORTED);
    expect(reported.details?.requests.at(-1)).toMatchObject({ report: { kind: "stopped" }, resolution: 1 });
  });
});
