import { describe, expect, it } from "vitest";
import { useNamedTargetRig } from "../fixtures/named-target-rig.js";
import { checkedResult, traceResult } from "../fixtures/test-env.js";

// details.resolutions[].dnssec and Extended DNS Errors, through both diagnostics (and the probe thread's bridge, threaded).
const rig = useNamedTargetRig();
const at = rig.at;
const DETAILS = { details: true } as const;
const doQueries = (name: string) => rig.dns.queries.filter((query) => query.name === name && query.dnssecOk).length;

describe("is-site-down", () => {
  it("SERVFAIL with EDE 6: with details the reason says DNSSEC bogus and the code is dns_dnssec_bogus; without, today's answer and no DO query", async () => {
    rig.dns.answer("bogus.sec.test", { rcode: "servfail", ede: [{ code: 6, text: "validation failure <bogus.sec.test. A IN>" }] });
    const plain = await checkedResult(at("bogus.sec.test", "/"), rig.env);
    expect(plain).toMatchObject({ status: "down", failedStage: "dns", reason: "DNS lookup failed: the name server reported a failure" });
    expect(doQueries("bogus.sec.test")).toBe(0);
    const detailed = await checkedResult(at("bogus.sec.test", "/"), rig.env, DETAILS);
    expect(detailed).toMatchObject({
      status: "down",
      failedStage: "dns",
      reason:
        'DNS lookup failed: DNSSEC validation failed (the answer is bogus) (Extended DNS Error 6 DNSSEC Bogus: "validation failure <bogus.sec.test. A IN>")',
      details: { code: "dns_dnssec_bogus" },
    });
    expect(detailed.details?.resolutions[0]).toMatchObject({
      dnssec: "bogus",
      code: "dns_dnssec_bogus",
      rcode: "SERVFAIL",
      extendedErrors: [{ infoCode: 6, name: "DNSSEC Bogus" }],
    });
    expect(doQueries("bogus.sec.test")).toBe(1);
  });

  it("only the first host is read: a redirect's host is unknown, and asked nothing more", async () => {
    rig.dns.answer("first.sec.test", { a: ["127.0.0.1"], ad: true });
    rig.dns.answer("second.sec.test", { a: ["127.0.0.1"], ad: true });
    rig.target.route("/sec/a", { kind: "redirect", status: 301, location: at("second.sec.test", "/sec/b") });
    rig.target.route("/sec/b", { kind: "status", status: 200 });
    const result = await checkedResult(at("first.sec.test", "/sec/a"), rig.env, DETAILS);
    expect(result.details?.resolutions.map(({ name, dnssec }) => [name, dnssec])).toEqual([
      ["first.sec.test", "validated"],
      ["second.sec.test", "unknown"],
    ]);
    expect(doQueries("second.sec.test")).toBe(0);
  });
});

describe("redirect-check", () => {
  it("the first hop's HEAD reads it; the GET sent in its place finds the same entry", async () => {
    rig.dns.answer("head.sec.test", { a: ["127.0.0.1"], ad: true });
    rig.target.route("/sec/head", { kind: "head-status", headStatus: 405, then: { kind: "status", status: 200 } });
    const result = await traceResult(at("head.sec.test", "/sec/head"), rig.env, DETAILS);
    expect(result.details?.requests.map((request) => [request.method, request.resolution])).toEqual([
      ["HEAD", 0],
      ["GET", 0],
      ["GET", 0],
    ]);
    expect(result.details?.resolutions.map(({ dnssec }) => dnssec)).toEqual(["validated"]);
    expect(doQueries("head.sec.test")).toBe(1);
  });

  it("a plain trace sends no DO query", async () => {
    rig.dns.answer("plain.sec.test", { a: ["127.0.0.1"], ad: true });
    rig.target.route("/sec/plain", { kind: "status", status: 200 });
    await traceResult(at("plain.sec.test", "/sec/plain"), rig.env);
    expect(doQueries("plain.sec.test")).toBe(0);
  });
});
