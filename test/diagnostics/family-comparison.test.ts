import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticDetails, FamilyComparison } from "../../src/diagnostics/diagnostic-details.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { type FamilySide, type FamilyTargets, startFamilyTargets } from "../fixtures/family-targets.js";
import { getTestPki, type TestPki } from "../fixtures/test-ca.js";
import { checkedResult, checkSite, createTestEnv, type TestEnv, traceEnv, traceRedirects, traceResult } from "../fixtures/test-env.js";
import { until } from "../fixtures/until.js";

/**
 * Both IP families of the first host: a name with A 127.0.0.1 and AAAA ::1
 * (the DNS fixture), and a server on each address of one port answering as
 * each test says. Happy Eyeballs tries ::1 first (RFC 8305), so over loopback
 * the first request goes over IPv6 whenever ::1 listens.
 */
const SITE_TIMEOUT_MS = 600;

let pki: TestPki;
let dns: DnsServer;
let env: TestEnv;
let narrowEnv: TestEnv;
const started: FamilyTargets[] = [];

beforeAll(async () => {
  pki = await getTestPki();
  dns = await startDnsServer();
  // The test PKI's leaves name localhost: the HTTPS cases need the name on the certificate.
  dns.answer("localhost", { a: ["127.0.0.1"], aaaa: ["::1"] });
  dns.answer("v4only.test", { a: ["127.0.0.1"] });
  // The first lookup has no AAAA; every later one answers ::1, which the narrow env's policy refuses.
  dns.answer("late-aaaa.test", { a: ["127.0.0.1"] }, { a: ["127.0.0.1"], aaaa: ["::1"] });
  env = createTestEnv({ ca: pki.caPem, dnsServers: [dns.server], siteTimeoutMs: SITE_TIMEOUT_MS });
  narrowEnv = createTestEnv({ ca: pki.caPem, dnsServers: [dns.server], siteTimeoutMs: SITE_TIMEOUT_MS, allowCidrs: ["127.0.0.0/8"] });
});

afterAll(async () => {
  await Promise.all([env.close(), narrowEnv.close(), ...started.map((targets) => targets.close())]);
  await dns.close();
});

async function dual(v4: FamilySide | "closed", v6: FamilySide | "closed"): Promise<FamilyTargets> {
  const targets = await startFamilyTargets({ 4: v4, 6: v6 });
  started.push(targets);
  return targets;
}

async function detailsOf(
  url: string,
  on: TestEnv = env,
): Promise<{ statusCode: number | null; status: string; details: DiagnosticDetails }> {
  const result = await checkedResult(url, on, { details: true });
  if (result.details === undefined) throw new Error("no details");
  return { statusCode: result.statusCode, status: result.status, details: result.details };
}

function familiesOf(details: DiagnosticDetails): FamilyComparison {
  if (details.families === null) throw new Error("no comparison of the families");
  return details.families;
}

describe("is-site-down with details, a name with both A and AAAA", () => {
  it("reports the other family refusing as ipv4_unreachable, the verdict staying IPv6's 200", async () => {
    const targets = await dual("closed", { status: 200 });
    const { status, statusCode, details } = await detailsOf(targets.url("/", "localhost"));
    expect({ status, statusCode }).toEqual({ status: "up", statusCode: 200 });
    expect(details.requests.map((request) => request.ipFamily)).toEqual([6]);
    const families = familiesOf(details);
    expect(families).toMatchObject({ pickedFamily: 6, otherFamily: 4, refusal: null, statusDiffers: false, certificateDiffers: false });
    expect(families.request).toMatchObject({
      url: targets.url("/", "localhost"),
      method: "GET",
      remoteAddress: "127.0.0.1",
      ipFamily: 4,
      status: null,
    });
    expect(families.request?.failure).toMatchObject({ stage: "connect", code: "connect_refused" });
    expect(details.warnings).toEqual([
      { code: "ipv4_unreachable", hop: 1, severity: "warning", message: expect.stringContaining("failed over IPv4 (127.0.0.1)") as string },
    ]);
  });

  it("reports IPv6 refusing as ipv6_unreachable when Happy Eyeballs fell back to IPv4", async () => {
    const targets = await dual({ status: 200 }, "closed");
    const { statusCode, details } = await detailsOf(targets.url("/", "localhost"));
    expect(statusCode).toBe(200);
    expect(details.requests.map((request) => request.ipFamily)).toEqual([4]);
    const families = familiesOf(details);
    expect(families).toMatchObject({ pickedFamily: 4, otherFamily: 6 });
    expect(families.request).toMatchObject({ remoteAddress: "::1", ipFamily: 6, status: null, failure: { stage: "connect" } });
    expect(details.warnings.map((warning) => warning.code)).toEqual(["ipv6_unreachable"]);
  });

  it("reports a 503 over the other family as families_disagree; status and code stay the browser path's", async () => {
    const targets = await dual({ status: 503 }, { status: 200 });
    const { status, statusCode, details } = await detailsOf(targets.url("/", "localhost"));
    expect({ status, statusCode, code: details.code }).toEqual({ status: "up", statusCode: 200, code: null });
    const families = familiesOf(details);
    expect(families).toMatchObject({ pickedFamily: 6, statusDiffers: true, certificateDiffers: false });
    expect(families.request).toMatchObject({ ipFamily: 4, status: 503, failure: null, httpVersion: "1.1" });
    expect(families.request?.timings.totalMs).toBeGreaterThan(0);
    expect(details.warnings.map((warning) => [warning.code, warning.severity])).toEqual([["families_disagree", "warning"]]);
    expect(details.warnings[0]?.message).toContain("answers 200 over IPv6 (::1) but 503 over IPv4 (127.0.0.1)");
  });

  it("reports another certificate over the other family as families_disagree, with each leaf's fingerprint", async () => {
    const targets = await dual(
      { status: 200, tls: { key: pki.viaIntermediate.key, cert: pki.viaIntermediate.cert + pki.intermediatePem } },
      { status: 200, tls: pki.valid },
    );
    const { statusCode, details } = await detailsOf(targets.url("/", "localhost"));
    expect(statusCode).toBe(200);
    const families = familiesOf(details);
    expect(families).toMatchObject({ statusDiffers: false, certificateDiffers: true });
    const pickedLeaf = details.requests[0]?.tls?.certificate?.fingerprintSha256;
    const otherLeaf = families.request?.tls?.certificate?.fingerprintSha256;
    expect(pickedLeaf).toMatch(/^[0-9A-F]{2}(:[0-9A-F]{2}){31}$/);
    expect(otherLeaf).toMatch(/^[0-9A-F]{2}(:[0-9A-F]{2}){31}$/);
    expect(otherLeaf).not.toBe(pickedLeaf);
    expect(details.warnings.map((warning) => warning.code)).toEqual(["families_disagree"]);
    expect(details.warnings[0]?.message).toMatch(/shows one certificate over IPv6 \(SHA-256 .+\) and another over IPv4 \(SHA-256 .+\)$/);
  });

  it("says both when the status and the certificate differ", async () => {
    const targets = await dual(
      { status: 503, tls: { key: pki.viaIntermediate.key, cert: pki.viaIntermediate.cert + pki.intermediatePem } },
      { status: 200, tls: pki.valid },
    );
    const { details } = await detailsOf(targets.url("/", "localhost"));
    expect(familiesOf(details)).toMatchObject({ statusDiffers: true, certificateDiffers: true });
    expect(details.warnings.map((warning) => warning.message)).toEqual([
      expect.stringMatching(
        /answers 200 over IPv6 \(::1\) but 503 over IPv4 \(127\.0\.0\.1\); it shows one certificate over IPv6 .* and another over IPv4 /,
      ),
    ]);
  });

  it("counts a handshake that showed another certificate, and failed verification, as a disagreement, not as unreachable", async () => {
    const targets = await dual({ status: 503, tls: pki.wrongHost }, { status: 200, tls: pki.valid });
    const { details } = await detailsOf(targets.url("/", "localhost"));
    // A certificate for another name fails verification: the handshake showed it, no request was sent over it.
    expect(familiesOf(details)).toMatchObject({
      statusDiffers: false,
      certificateDiffers: true,
      request: { status: null, failure: { stage: "tls" } },
    });
    expect(details.warnings.map((warning) => warning.code)).toEqual(["families_disagree"]);
  });

  it("agrees without a warning when both families answer alike", async () => {
    const targets = await dual({ status: 200, tls: pki.valid }, { status: 200, tls: pki.valid });
    const { details } = await detailsOf(targets.url("/", "localhost"));
    expect(familiesOf(details)).toMatchObject({ statusDiffers: false, certificateDiffers: false, request: { status: 200, ipFamily: 4 } });
    expect(details.warnings).toEqual([]);
    expect(targets.connections(4)).toBe(1);
  });

  it("names the picked family when its request failed after connecting and the other family answered; the verdict stays DOWN", async () => {
    const targets = await dual({ status: 200 }, { status: "reset" });
    const { status, details } = await detailsOf(targets.url("/", "localhost"));
    expect(status).toBe("down");
    expect(details.requests.map((request) => [request.ipFamily, request.failure?.stage])).toEqual([[6, "http"]]);
    expect(familiesOf(details)).toMatchObject({ pickedFamily: 6, otherFamily: 4, request: { ipFamily: 4, status: 200 } });
    expect(details.warnings).toEqual([
      expect.objectContaining({
        code: "ipv6_unreachable",
        message: expect.stringMatching(/failed over IPv6 \(::1\): .*; over IPv4 \(127\.0\.0\.1\) it answered 200$/) as string,
      }),
    ]);
  });

  it("bounds the other family's request by the per-request timeout, and still answers; its time is in no figure of the check", async () => {
    const targets = await dual({ status: "hang" }, { status: 200 });
    const result = await checkedResult(targets.url("/", "localhost"), env, { details: true });
    const details = result.details as DiagnosticDetails;
    expect(result.statusCode).toBe(200);
    expect(result.responseTime).toBe(Math.round((details.requests[0]?.timings.totalMs ?? -1) + 0.0001));
    expect(familiesOf(details).request?.failure).toMatchObject({ stage: "http", timedOut: true });
    // Node's timer may fire a fraction of a millisecond early: the timeout's own figure, within one millisecond.
    expect(familiesOf(details).request?.failure?.elapsedMs).toBeGreaterThan(SITE_TIMEOUT_MS - 1);
    expect(details.warnings.map((warning) => warning.code)).toEqual(["ipv4_unreachable"]);
  });

  it("ends the other family's request with the check: a caller gone while it is out gets cancelled, and its connection is closed", async () => {
    const targets = await dual({ status: "hang" }, { status: 200 });
    // Far longer than the test may take: only the caller's signal can end the hanging request.
    const patient = createTestEnv({ ca: pki.caPem, dnsServers: [dns.server], siteTimeoutMs: 120_000 });
    try {
      await patient.prober.ready?.();
      const caller = new AbortController();
      const pending = checkSite(targets.url("/", "localhost"), patient, caller.signal, { details: true });
      await until(() => (targets.connections(4) === 1 ? true : undefined));
      caller.abort(new Error("the caller left"));
      expect((await pending).kind).toBe("cancelled");
      await until(() => (targets.open(4) === 0 ? true : undefined));
    } finally {
      await patient.close();
    }
  });

  it("makes no second request without details", async () => {
    const targets = await dual({ status: 200 }, { status: 200 });
    const result = await checkedResult(targets.url("/", "localhost"), env);
    expect(result.statusCode).toBe(200);
    expect(targets.connections(4) + targets.connections(6)).toBe(1);
  });
});

describe("is-site-down with details, other hosts", () => {
  it("makes no second request for a name with one family", async () => {
    const targets = await dual({ status: 200 }, { status: 200 });
    const { details } = await detailsOf(targets.url("/", "v4only.test"));
    expect(details.families).toBeNull();
    expect(details.warnings).toEqual([]);
    expect(details.requests).toHaveLength(1);
    expect([targets.connections(4), targets.connections(6)]).toEqual([1, 0]);
  });

  it("makes no second request for an IP literal", async () => {
    const targets = await dual({ status: 200 }, { status: 200 });
    const { details } = await detailsOf(targets.url("/", "127.0.0.1"));
    expect(details.families).toBeNull();
    expect(targets.connections(6)).toBe(0);
  });

  it("judges the other family's addresses by the policy: a refused one is reported, and never sent a packet", async () => {
    const targets = await dual({ status: 200 }, { status: 200 });
    const { statusCode, details } = await detailsOf(targets.url("/", "late-aaaa.test"), narrowEnv);
    expect(statusCode).toBe(200);
    const families = familiesOf(details);
    expect(families).toMatchObject({ pickedFamily: 4, otherFamily: 6, request: null, refusal: { code: "input_resolves_non_public" } });
    expect(families.refusal?.reason).toContain("::1");
    expect(details.warnings).toEqual([]);
    expect(targets.connections(6)).toBe(0);
  });
});

describe("redirect-check with details", () => {
  it("lists families_disagree in its warnings (hop 1) and in details, the chain staying IPv6's", async () => {
    const targets = await dual({ status: 503 }, { status: 200 });
    const trace = traceEnv(env.prober, { tracePorts: [targets.port] });
    const url = targets.url("/", "localhost");
    const result = await traceResult(url, trace, { details: true });
    expect(result).toMatchObject({ chainStatus: "healthy", finalStatus: 200 });
    // The chain's own figure: the other family's request is evidence, not a request of the chain.
    expect(result.totalTimeMs).toBe(Math.round((result.details?.requests[0]?.timings.totalMs ?? -1) + 0.0001));
    expect(result.warnings.filter((warning) => warning.code === "families_disagree")).toEqual([
      expect.objectContaining({ hop: 1, severity: "warning" }),
    ]);
    const families = familiesOf(result.details as DiagnosticDetails);
    // HEAD, the chain's own method, once, not the chain.
    expect(families.request).toMatchObject({ method: "HEAD", ipFamily: 4, status: 503 });
    expect(result.details?.warnings.map((warning) => warning.code)).toEqual(["families_disagree"]);
  });

  it("is cancelled when the caller leaves while the other family's request is out, which ends with it", async () => {
    const targets = await dual({ status: "hang" }, { status: 200 });
    const trace = traceEnv(env.prober, { tracePorts: [targets.port], traceHopTimeoutMs: 120_000, traceTotalTimeoutMs: 120_000 });
    const caller = new AbortController();
    const pending = traceRedirects(targets.url("/", "localhost"), trace, caller.signal, { details: true });
    await until(() => (targets.connections(4) === 1 ? true : undefined));
    caller.abort(new Error("the caller left"));
    expect((await pending).kind).toBe("cancelled");
    await until(() => (targets.open(4) === 0 ? true : undefined));
  });

  it("has no family request and no family warning without details", async () => {
    const targets = await dual({ status: 503 }, { status: 200 });
    const trace = traceEnv(env.prober, { tracePorts: [targets.port] });
    const result = await traceResult(targets.url("/", "localhost"), trace);
    expect(result.warnings.map((warning) => warning.code)).not.toContain("families_disagree");
    expect(targets.connections(4)).toBe(0);
  });
});
