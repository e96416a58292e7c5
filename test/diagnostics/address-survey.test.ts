import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AddressSurvey } from "../../src/diagnostics/address-survey.js";
import type { DiagnosticDetails } from "../../src/diagnostics/diagnostic-details.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { checkedResult, checkSite, createTestEnv, type TestEnv, traceEnv, traceResult } from "../fixtures/test-env.js";

/**
 * Every address of the first host: `multi.example` has A 127.0.0.1,
 * 127.0.0.3 and 127.0.0.4 (the DNS fixture; every 127/8 address is local on
 * Linux), one port with a server on .1 and .4 and nothing on .3. Each server
 * counts the requests it got, so a test can say what was sent where.
 */
const SITE_TIMEOUT_MS = 1_500;

interface Side {
  status: number;
  requests: number;
  connections: number;
  readonly server: Server;
}

let dns: DnsServer;
let env: TestEnv;
let narrowEnv: TestEnv;
let port: number;
const sides = new Map<string, Side>();

async function listen(host: string, at: number): Promise<number> {
  const side: Side = { status: 200, requests: 0, connections: 0, server: createServer() };
  side.server.on("connection", () => (side.connections += 1));
  side.server.on("request", (_request, response) => {
    side.requests += 1;
    response.writeHead(side.status, { "content-type": "text/plain", connection: "close" }).end("ok");
  });
  side.server.listen(at, host);
  await once(side.server, "listening");
  sides.set(host, side);
  return (side.server.address() as AddressInfo).port;
}

function side(host: string): Side {
  const found = sides.get(host);
  if (found === undefined) throw new Error(`no server on ${host}`);
  return found;
}

function reset(): void {
  for (const one of sides.values()) Object.assign(one, { status: 200, requests: 0, connections: 0 });
}

beforeAll(async () => {
  port = await listen("127.0.0.1", 0);
  await listen("127.0.0.4", port);
  // Outside the narrow policy (127.0.0.0/24): listened on only to see that nothing arrives.
  await listen("127.0.1.5", port);
  await listen("::1", port);
  dns = await startDnsServer();
  dns.answer("multi.example", { a: ["127.0.0.1", "127.0.0.3", "127.0.0.4"] });
  dns.answer("pair.example", { a: ["127.0.0.1", "127.0.0.4"] });
  dns.answer("dual.example", { a: ["127.0.0.1", "127.0.0.4"], aaaa: ["::1"] });
  dns.answer("one.example", { a: ["127.0.0.1"] });
  // The first lookup is all allowed; every later one adds an address the narrow policy refuses.
  dns.answer("rebind.example", { a: ["127.0.0.1", "127.0.0.4"] }, { a: ["127.0.0.1", "127.0.0.4", "127.0.1.5"] });
  dns.answer("mixed.example", { a: ["127.0.0.1", "127.0.0.4", "127.0.1.5"] });
  // Thousands of records: 127.0.0.1 first, then 1,999 more addresses (the most a UDP answer of the fixture carries is near 2,500) on which nothing listens.
  dns.answer("crowd.example", { a: ["127.0.0.1", ...Array.from({ length: 1_999 }, (_, i) => `127.0.${10 + (i >> 8)}.${i & 255}`)] });
  env = createTestEnv({ dnsServers: [dns.server], siteTimeoutMs: SITE_TIMEOUT_MS });
  narrowEnv = createTestEnv({ dnsServers: [dns.server], siteTimeoutMs: SITE_TIMEOUT_MS, allowCidrs: ["127.0.0.0/24"] });
});

afterAll(async () => {
  await Promise.all([
    env.close(),
    narrowEnv.close(),
    ...[...sides.values()].map(({ server }) => new Promise((resolve) => server.close(resolve))),
  ]);
  await dns.close();
});

async function detailsOf(
  host: string,
  on: TestEnv = env,
): Promise<{ status: string; statusCode: number | null; details: DiagnosticDetails }> {
  reset();
  const result = await checkedResult(`http://${host}:${String(port)}/`, on, { details: true });
  if (result.details === undefined) throw new Error("no details");
  return { status: result.status, statusCode: result.statusCode, details: result.details };
}

function surveyOf(details: DiagnosticDetails): AddressSurvey {
  if (details.addresses === null) throw new Error("no survey of the addresses");
  return details.addresses;
}

describe("is-site-down with details, a name with several addresses", () => {
  it("tries each address once: the one nobody listens on is named unreachable, the verdict stays the first request's", async () => {
    const { status, statusCode, details } = await detailsOf("multi.example");
    expect([status, statusCode]).toEqual(["up", 200]);
    const survey = surveyOf(details);
    expect(
      survey.attempts.map(({ address, outcome, firstRequest, status: code, failedStage }) => ({
        address,
        outcome,
        firstRequest,
        code,
        failedStage,
      })),
    ).toEqual([
      { address: "127.0.0.1", outcome: "answered", firstRequest: true, code: 200, failedStage: null },
      { address: "127.0.0.3", outcome: "failed", firstRequest: false, code: null, failedStage: "connect" },
      { address: "127.0.0.4", outcome: "answered", firstRequest: false, code: 200, failedStage: null },
    ]);
    expect(survey.attempts[1]?.code).toBe("connect_refused");
    expect(survey.attempts[2]?.connectMs).toBeGreaterThanOrEqual(0);
    expect(survey.attempts[2]?.firstByteMs).toBeGreaterThanOrEqual(0);
    expect(survey).toMatchObject({ untried: 0, statusDiffers: false, certificateDiffers: false });
    const unreachable = details.warnings.filter(({ code }) => code === "address_unreachable");
    expect(unreachable).toHaveLength(1);
    expect(unreachable[0]).toMatchObject({ severity: "warning", hop: 1 });
    expect(unreachable[0]?.message).toContain("127.0.0.3");
    expect(unreachable[0]?.message).not.toContain("127.0.0.4");
    // The first request's address is its own row: it was not asked again.
    expect([side("127.0.0.1").requests, side("127.0.0.4").requests]).toEqual([1, 1]);
  });

  it("reports a different status at another address as addresses_disagree", async () => {
    reset();
    const survey = await (async () => {
      side("127.0.0.4").status = 503;
      const result = await checkedResult(`http://pair.example:${String(port)}/`, env, { details: true });
      return result;
    })();
    expect([survey.status, survey.statusCode]).toEqual(["up", 200]);
    const details = survey.details as DiagnosticDetails;
    expect(surveyOf(details).statusDiffers).toBe(true);
    const disagree = details.warnings.find(({ code }) => code === "addresses_disagree");
    expect(disagree?.message).toContain("503 at 127.0.0.4");
    expect(details.warnings.some(({ code }) => code === "address_unreachable")).toBe(false);
  });

  it("reads both IP families from the addresses' requests: no address is asked twice", async () => {
    const { details } = await detailsOf("dual.example");
    const survey = surveyOf(details);
    // Happy Eyeballs tries ::1 first: the first request's row; the IPv4 addresses follow the name's order (A first).
    expect(survey.attempts.map(({ address, firstRequest }) => [address, firstRequest])).toEqual([
      ["127.0.0.1", false],
      ["127.0.0.4", false],
      ["::1", true],
    ]);
    expect(details.families).toMatchObject({ pickedFamily: 6, otherFamily: 4, statusDiffers: false });
    expect(details.families?.request?.remoteAddress).toBe("127.0.0.1");
    expect([side("::1").requests, side("127.0.0.1").requests, side("127.0.0.4").requests]).toEqual([1, 1, 1]);
  });

  it("sends nothing more without details", async () => {
    reset();
    const result = await checkedResult(`http://multi.example:${String(port)}/`, env);
    expect(result.details).toBeUndefined();
    expect([side("127.0.0.1").connections, side("127.0.0.4").connections]).toEqual([1, 0]);
  });

  it("makes no survey for a name with one address", async () => {
    const { details } = await detailsOf("one.example");
    expect(details.addresses).toBeNull();
    expect(side("127.0.0.4").connections).toBe(0);
  });

  it("bounds thousands of records: 8 tried, the rest counted", async () => {
    const { status, details } = await detailsOf("crowd.example");
    expect(status).toBe("up");
    const survey = surveyOf(details);
    expect(survey.attempts).toHaveLength(8);
    expect(survey.untried).toBe(1_992);
    expect(survey.attempts.filter(({ outcome }) => outcome === "failed")).toHaveLength(7);
    const unreachable = details.warnings.find(({ code }) => code === "address_unreachable");
    expect(unreachable?.message).toContain("7 of 8 addresses");
  });

  it("refuses the whole check when one answer is outside the policy, and sends nothing to any address", async () => {
    reset();
    const outcome = await checkSite(`http://mixed.example:${String(port)}/`, narrowEnv, undefined, { details: true });
    expect(outcome.kind).toBe("refused");
    expect([side("127.0.0.1").connections, side("127.0.0.4").connections, side("127.0.1.5").connections]).toEqual([0, 0, 0]);
  });

  it("judges every answer again for each address: an answer that turned to a refused address gets nothing sent", async () => {
    const { status, details } = await detailsOf("rebind.example", narrowEnv);
    expect(status).toBe("up");
    const survey = surveyOf(details);
    expect(survey.attempts.map(({ address, outcome }) => [address, outcome])).toEqual([
      ["127.0.0.1", "answered"],
      ["127.0.0.4", "refused"],
    ]);
    expect(survey.attempts[1]?.code).toBe("input_resolves_non_public");
    expect([side("127.0.0.4").connections, side("127.0.1.5").connections]).toEqual([0, 0]);
    expect(details.warnings.filter(({ code }) => code.startsWith("address"))).toEqual([]);
  });
});

describe("redirect-check with details, a name with several addresses", () => {
  it("tries each address with the first request's HEAD and lists address_unreachable in its warnings too", async () => {
    reset();
    const result = await traceResult(
      `http://multi.example:${String(port)}/`,
      traceEnv(env.prober, { tracePorts: [port], traceHopTimeoutMs: SITE_TIMEOUT_MS, traceTotalTimeoutMs: 4_000 }),
      { details: true },
    );
    const survey = surveyOf(result.details as DiagnosticDetails);
    expect(survey.attempts.map(({ address, outcome }) => [address, outcome])).toEqual([
      ["127.0.0.1", "answered"],
      ["127.0.0.3", "failed"],
      ["127.0.0.4", "answered"],
    ]);
    expect(result.warnings.filter(({ code }) => code === "address_unreachable")).toHaveLength(1);
  });
});
