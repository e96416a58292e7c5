import { describe, expect, it } from "vitest";
import { useNamedTargetRig } from "../fixtures/named-target-rig.js";
import { checkedResult, REPORTED, traceResult } from "../fixtures/test-env.js";

// details.resolutions: each lookup once, referenced by index from the requests that used it.
const rig = useNamedTargetRig();
const at = rig.at;
const DETAILS = { details: true } as const;

describe("is-site-down", () => {
  it("three requests to one host: one resolution, with its chain and TTL, used by all three", async () => {
    rig.dns.answer("www.one.test", { cname: "edge.one.test", ttl: 900 });
    rig.dns.answer("edge.one.test", { a: ["127.0.0.1"], ttl: 120 });
    rig.target.route("/one/a", { kind: "redirect", status: 301, location: at("www.one.test", "/one/b") });
    rig.target.route("/one/b", { kind: "redirect", status: 302, location: "/one/c" });
    rig.target.route("/one/c", { kind: "status", status: 200 });
    const result = await checkedResult(at("www.one.test", "/one/a"), rig.env, DETAILS);
    const details = result.details;
    if (details === undefined) throw new Error("no details");
    expect(details.requests.map((request) => request.resolution)).toEqual([0, 0, 0]);
    expect(details.resolutions).toEqual([
      {
        name: "www.one.test",
        source: { kind: "configured", servers: [rig.dns.server] },
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
    rig.dns.answer("from.nx.test", { a: ["127.0.0.1"] });
    rig.dns.answer("gone.nx.test", "nxdomain");
    rig.target.route("/nx", { kind: "redirect", status: 301, location: at("gone.nx.test", "/") });
    const result = await checkedResult(at("from.nx.test", "/nx"), rig.env, DETAILS);
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
    rig.dns.answer("plain.one.test", { a: ["127.0.0.1"] });
    rig.target.route("/plain", { kind: "status", status: 200 });
    const from = rig.dns.queries.length;
    expect(await checkedResult(at("plain.one.test", "/plain"), rig.env)).toMatchObject({ status: "up" });
    expect(
      rig.dns.queries
        .slice(from)
        .map(({ type }) => type)
        .sort(),
    ).toEqual(["A", "AAAA"]);
  });
});

describe("redirect-check", () => {
  it("HEAD and GET of one host, then another host: one entry per host, in the order requests used them", async () => {
    rig.dns.answer("a.two.test", { a: ["127.0.0.1"], ttl: 60 });
    rig.dns.answer("b.two.test", { a: ["127.0.0.1"], ttl: 30 });
    // HEAD refused with 405: the position is asked again with GET, which resolves the name again.
    rig.target.route("/two/a", {
      kind: "head-status",
      headStatus: 405,
      then: { kind: "redirect", status: 301, location: at("b.two.test", "/two/b") },
    });
    rig.target.route("/two/b", { kind: "status", status: 200 });
    const result = await traceResult(at("a.two.test", "/two/a"), rig.env, DETAILS);
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
    // Every hop resolves its own name (the policy judges each hop's answers); 127.0.0.9 is loopback too, and no fixture binds it.
    rig.dns.answer("flip.two.test", { a: ["127.0.0.1"] }, { a: ["127.0.0.9"] });
    rig.target.route("/flip/a", { kind: "redirect", status: 301, location: "/flip/b" });
    const result = await traceResult(at("flip.two.test", "/flip/a"), rig.env, DETAILS);
    expect(result.details?.requests.map((request) => request.resolution)).toEqual([0, 1]);
    expect(result.details?.resolutions.map(({ name, answers }) => [name, answers.map(({ address }) => address)])).toEqual([
      ["flip.two.test", ["127.0.0.1"]],
      ["flip.two.test", ["127.0.0.9"]],
    ]);
  });

  it("a redirect to a name that resolves to a non-public address: the refused lookup is shown, and the report's stopped position points at it", async () => {
    rig.dns.answer("from.meta.test", { a: ["127.0.0.1"] });
    rig.dns.answer("metadata.meta.test", { a: ["169.254.169.254"] });
    rig.target.route("/meta", { kind: "redirect", status: 302, location: `http://metadata.meta.test:${rig.target.port}/latest/` });
    const api = await traceResult(at("from.meta.test", "/meta"), rig.env, DETAILS);
    expect(api.details?.requests.map((request) => request.resolution)).toEqual([0]);
    expect(api.details?.resolutions[1]).toMatchObject({
      name: "metadata.meta.test",
      answers: [{ address: "169.254.169.254" }],
      code: null,
    });
    const reported = await traceResult(at("from.meta.test", "/meta"), rig.env, REPORTED);
    expect(reported.details?.requests.at(-1)).toMatchObject({ report: { kind: "stopped" }, resolution: 1 });
  });
});
