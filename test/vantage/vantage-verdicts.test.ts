import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { JsonObject } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { DiagnosticsService, VantageState, VantageVerdict } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticRunner } from "../../src/runner/diagnostic-runner.js";
import { SITE_CHECK } from "../../src/shared/limits.js";
import { createLocalFanout, type LocalVantage } from "../../src/vantage/local-fanout.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";
import { createTestEnv, runnerOf, type TestEnv } from "../fixtures/test-env.js";

// One check from several vantages, each a real runner in this process with
// its own DNS server answering differently, as regions see the Internet
// apart: the fanout of the seam without an engine between them. Vantage
// `policed` may visit 127.0.0.2 only, so its own policy refuses what the
// others reach.

const NAMES = ["eu-west", "us-east", "ap-south"] as const;
const DEADLINE_MS = 3_000;
const BUDGET = 1_000;

let targets: HttpTargets;
let challenge: Server;
const dns = new Map<string, DnsServer>();
const envs: TestEnv[] = [];
let service: ServeTestService;

function vantage(name: string, server: DnsServer, allowCidrs?: readonly string[]): LocalVantage {
  const env = createTestEnv({ dnsServers: [server.server], ...(allowCidrs === undefined ? {} : { allowCidrs }) });
  envs.push(env);
  const runner: DiagnosticRunner = runnerOf(env);
  return { info: { name, label: `Vantage ${name}`, location: `${name} on loopback` }, runner };
}

beforeAll(async () => {
  targets = await startHttpTargets({ routes: { "/": { kind: "respond", status: 200 } } });
  // The same port on 127.0.0.2: a proxy's challenge page, for the vantage whose DNS points there.
  challenge = createServer((_request, response) => {
    response.writeHead(403, { "cf-ray": "8a1b2c3d4e5f6789-AMS", "cf-mitigated": "challenge", server: "cloudflare" });
    response.end("Just a moment...");
  });
  challenge.listen(targets.httpPort, "127.0.0.2");
  await once(challenge, "listening");
  for (const name of [...NAMES, "policed"]) dns.set(name, await startDnsServer());
  const answer = (name: string, host: string, address: "nxdomain" | "never" | string) =>
    dns.get(name)?.answer(host, address === "nxdomain" || address === "never" ? address : { a: [address] });
  for (const name of NAMES) {
    answer(name, "site.test", name === "ap-south" ? "nxdomain" : "127.0.0.1");
    answer(name, "shop.test", name === "ap-south" ? "127.0.0.2" : "127.0.0.1");
    answer(name, "slow.test", name === "ap-south" ? "never" : "127.0.0.1");
    answer(name, "fine.test", "127.0.0.1");
    answer(name, "gone.test", "nxdomain");
  }
  answer("policed", "fine.test", "127.0.0.1");
  const members = NAMES.map((name) => vantage(name, dns.get(name) as DnsServer));
  const policed = vantage("policed", dns.get("policed") as DnsServer, ["127.0.0.2/32"]);
  const [self, ...others] = members;
  if (self === undefined) throw new Error("no vantage");
  service = await startTestService({
    as: "serve",
    config: { creditBudget: BUDGET },
    fanout: () => createLocalFanout(self, [...others, policed]),
    vantageDeadlines: { siteCheckMs: DEADLINE_MS, traceMs: DEADLINE_MS },
  });
});

afterAll(async () => {
  await service?.close();
  await Promise.all(envs.map((env) => env.close()));
  await Promise.all([...dns.values()].map((server) => server.close()));
  challenge?.close();
  await targets?.close();
});

async function used(): Promise<number> {
  return (await service.store.usage(service.keyId, { budget: BUDGET, windowSeconds: 86_400 })).used;
}

async function fromVantages(host: string, vantages: string): Promise<{ verdict: string; entries: JsonObject[] }> {
  const url = `http://${host}:${targets.httpPort}/`;
  const response = await fetch(`${service.url}/api/v1/is-site-down?${new URLSearchParams({ url, vantages }).toString()}`, {
    headers: { "x-api-key": service.key },
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { data: { vantages: { verdict: string; entries: JsonObject[] } } };
  return body.data.vantages;
}

function states(entries: readonly JsonObject[]): Record<string, string> {
  return Object.fromEntries(entries.map((entry) => [(entry.vantage as JsonObject).name, (entry.vantage as JsonObject).state]));
}

const ASKED = NAMES.join(",");

describe("the verdict over three vantages that see the target differently", () => {
  it("up from two, unresolvable from the third: down_in_some, entries in name order", async () => {
    const { verdict, entries } = await fromVantages("site.test", ASKED);
    expect(verdict).toBe("down_in_some");
    expect(entries.map((entry) => (entry.vantage as JsonObject).name)).toEqual(["ap-south", "eu-west", "us-east"]);
    expect(entries.map((entry) => (entry.data as JsonObject).status)).toEqual(["down", "up", "up"]);
    expect((entries[0]?.data as JsonObject).failedStage).toBe("dns");
    expect(entries[1]?.vantage).toMatchObject({ label: "Vantage eu-west", location: "eu-west on loopback" });
  });

  it("what differs between them, computed by the service: the addresses and resolver each used (with details), status, final URL, failed stage", async () => {
    const url = `http://site.test:${targets.httpPort}/`;
    const response = await fetch(
      `${service.url}/api/v1/is-site-down?${new URLSearchParams({ url, vantages: ASKED, details: "true" }).toString()}`,
      { headers: { "x-api-key": service.key } },
    );
    const { differences } = (
      (await response.json()) as {
        data: { vantages: { differences: { aspect: string; values: { value: string; vantages: string[] }[] }[] } };
      }
    ).data.vantages;
    const byAspect = Object.fromEntries(differences.map((difference) => [difference.aspect, difference.values]));
    expect(Object.keys(byAspect)).toEqual(["addresses", "resolver", "status", "final_url", "failed_stage"]);
    expect(byAspect.addresses).toEqual([
      { value: "NXDOMAIN", vantages: ["ap-south"] },
      { value: "127.0.0.1", vantages: ["eu-west", "us-east"] },
    ]);
    expect(byAspect.resolver?.map((value) => value.value)).toEqual(
      NAMES.slice()
        .sort()
        .map((name) => `configured ${dns.get(name)?.server ?? ""}`),
    );
    expect(byAspect.failed_stage).toEqual([
      { value: "dns", vantages: ["ap-south"] },
      { value: "none", vantages: ["eu-west", "us-east"] },
    ]);
    // The same on the streaming door's last message.
    const streamed = await fetch(`${service.url}/api/v1/vantages/is-site-down`, {
      method: "POST",
      headers: { "x-api-key": service.key, "content-type": "application/json" },
      body: JSON.stringify({ url, vantages: [ASKED], details: true }),
    });
    const last = (await streamed.text())
      .trimEnd()
      .split("\n")
      .map((line) => (JSON.parse(line) as { data: JsonObject }).data)
      .at(-1);
    expect(last?.differences).toEqual(differences);
  });

  it("nothing differs where all agree: differences null", async () => {
    const response = await fetch(
      `${service.url}/api/v1/is-site-down?${new URLSearchParams({ url: `http://fine.test:${targets.httpPort}/`, vantages: ASKED }).toString()}`,
      { headers: { "x-api-key": service.key } },
    );
    expect(((await response.json()) as { data: { vantages: JsonObject } }).data.vantages.differences).toBeNull();
  });

  it("a challenge page from one, up from the others: blocked_in_some", async () => {
    const { verdict, entries } = await fromVantages("shop.test", ASKED);
    expect(verdict).toBe("blocked_in_some");
    expect(entries.map((entry) => (entry.data as JsonObject).statusCode)).toEqual([403, 200, 200]);
    expect((entries[0]?.data as JsonObject).proxyBlocked).toBe(true);
  });

  it("up from all: up_everywhere; gone from all: down_everywhere", async () => {
    expect((await fromVantages("fine.test", ASKED)).verdict).toBe("up_everywhere");
    expect((await fromVantages("gone.test", ASKED)).verdict).toBe("down_everywhere");
  });

  it("all names every vantage with a live instance", async () => {
    const { entries } = await fromVantages("fine.test", "all");
    expect(Object.keys(states(entries))).toEqual(["ap-south", "eu-west", "policed", "us-east"]);
  });
});

describe("a vantage that does not answer by the deadline", () => {
  it("is unavailable, never down; the verdict is the others'; its credits come back, once", async () => {
    const before = await used();
    const asked = Date.now();
    const { verdict, entries } = await fromVantages("slow.test", ASKED);
    const took = Date.now() - asked;
    expect(states(entries)).toEqual({ "ap-south": "unavailable", "eu-west": "done", "us-east": "done" });
    expect(entries[0]?.vantage).toMatchObject({ code: "deadline", state: "unavailable" });
    expect(entries[0]?.data).toBeNull();
    // Up where it was seen, never "everywhere": one region said nothing.
    expect(verdict).toBe("up_where_answered");
    // At the deadline, not at the vantage's own DNS timeout (6 s a request): the answer came when it was due.
    expect(took).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    // The entry's time counts from the fan-out's start, after the call's intake (its key, its charge), which a busy
    // machine stretches (CI's Node 22 line: 2,897 ms at a deadline of 3 s): within the call's own time, and told at
    // the deadline, not at the vantage's DNS timeout.
    const elapsedMs = Number((entries[0]?.vantage as JsonObject).elapsedMs);
    expect(elapsedMs).toBeLessThanOrEqual(took);
    expect(elapsedMs).toBeGreaterThanOrEqual(DEADLINE_MS - 1_000);
    expect(elapsedMs).toBeLessThan(SITE_CHECK.requestTimeoutMs);
    expect((await used()) - before).toBe(2 * 2);
  });
});

describe("a vantage whose own policy refuses the target", () => {
  it("is refused, charged (it judged the target), and left out of the verdict: up only where answered", async () => {
    const before = await used();
    const { verdict, entries } = await fromVantages("fine.test", "eu-west,policed");
    expect(states(entries)).toEqual({ "eu-west": "done", policed: "refused" });
    expect(entries[1]?.vantage).toMatchObject({
      code: "input_resolves_non_public",
      reason: expect.stringContaining("127.0.0.1") as string,
    });
    expect(verdict).toBe("up_where_answered");
    expect((await used()) - before).toBe(2 * 2);
  });
});

describe("the streaming door", () => {
  it("sends each vantage's entry as it arrives: the two that answer long before the one held to the deadline", async () => {
    const client = createClient(DiagnosticsService, createGrpcTransport({ baseUrl: service.url }));
    const started = performance.now();
    const received: {
      readonly at: number;
      readonly name: string | undefined;
      readonly state: VantageState | undefined;
      readonly verdict: VantageVerdict | undefined;
    }[] = [];
    for await (const message of client.vantageCheckSite(
      { url: `http://slow.test:${targets.httpPort}/`, vantages: [ASKED] },
      { headers: { "x-api-key": service.key } },
    )) {
      received.push({
        at: performance.now() - started,
        name: message.entry?.vantage?.name,
        state: message.entry?.vantage?.state,
        verdict: message.verdict,
      });
    }
    expect(
      received
        .map((message) => message.name ?? "verdict")
        .slice(0, 2)
        .sort(),
    ).toEqual(["eu-west", "us-east"]);
    expect(received.slice(2).map((message) => [message.name, message.state, message.verdict])).toEqual([
      ["ap-south", VantageState.UNAVAILABLE, undefined],
      [undefined, undefined, VantageVerdict.UP_WHERE_ANSWERED],
    ]);
    // Streamed, not held back: the answering two were in hand while the third was still out (it ends at the deadline).
    const [first, second, held] = received;
    expect(held?.at).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect((second?.at ?? Infinity) + DEADLINE_MS / 3).toBeLessThan(held?.at ?? 0);
    expect(first?.at).toBeLessThanOrEqual(second?.at ?? 0);
  });
});
