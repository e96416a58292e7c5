import type { JsonObject } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsService, SiteStatus, VantageVerdict } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { issueKey } from "../../src/access/issue-key.js";
import { openStore } from "../../src/access/open-store.js";
import type { AccessStore } from "../../src/access/store.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type RedisClusterFixture, startRedisCluster } from "../fixtures/redis-cluster.js";
import { redisAvailability } from "../../testkit/redis-server.js";
import { eventually, type ServeProcess, startServe } from "../fixtures/vantage-rig.js";
import { killAndRestartRegion } from "../fixtures/killed-region.js";

// Three vantages as `sitediag serve` processes on one Redis Cluster, each
// with its own DNS server: the keys' store and the vantage engine share the
// cluster, and a call to one instance is charged, fanned out and answered
// as on one Redis; a region killed and started again (test/fixtures/killed-region.ts).
const availability = redisAvailability();
const VANTAGES = ["ap-south", "eu-west", "us-east"] as const;
const POLICY = { budget: 1_000, windowSeconds: 86_400 };

describe.skipIf(!availability.available)("three vantages on a Redis Cluster, `sitediag serve` processes", () => {
  let cluster: RedisClusterFixture;
  let targets: HttpTargets;
  let store: AccessStore;
  let key: { secret: string; id: string };
  const dns: DnsServer[] = [];
  const serves: ServeProcess[] = [];
  /** Each vantage's settings, to start it again as it was. */
  const settings = new Map<string, Readonly<Record<string, string>>>();

  beforeAll(async () => {
    [cluster, targets] = await Promise.all([
      startRedisCluster(),
      startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 } } }),
    ]);
    const started = await Promise.all(
      VANTAGES.map(async (name) => {
        const server = await startDnsServer();
        dns.push(server);
        server.answer("site.test", name === "ap-south" ? "nxdomain" : { a: ["127.0.0.1"] });
        settings.set(name, {
          SITEDIAG_STORE: `redis+cluster://${cluster.seeds}`,
          SITEDIAG_VANTAGE: name,
          SITEDIAG_DNS_SERVERS: server.server,
          SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8",
          SITEDIAG_CREDIT_BUDGET: String(POLICY.budget),
          SITEDIAG_CREDIT_WINDOW_SECONDS: String(POLICY.windowSeconds),
        });
        return startServe(settings.get(name) ?? {});
      }),
    );
    serves.push(...started);
    store = await openStore({ kind: "redis-cluster", nodes: cluster.nodes, password: undefined });
    const issued = await issueKey(store, "cluster end to end");
    if (issued === undefined) throw new Error("no key");
    key = { secret: issued.secret, id: issued.record.id };
    await eventually(async () => ((await entriesOf(targets.url("/ok"))).length === 3 ? true : undefined));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(serves.map((serve) => serve.kill()));
    await store?.close();
    for (const server of dns) await server.close();
    await targets?.close();
    await cluster?.close();
  });

  async function entriesOf(url: string): Promise<JsonObject[]> {
    const response = await fetch(
      `${serves[1]?.url ?? ""}/api/v1/is-site-down?${new URLSearchParams({ url, vantages: "all" }).toString()}`,
      { headers: { "x-api-key": key.secret } },
    );
    const body = (await response.json()) as JsonObject;
    expect(response.status, JSON.stringify(body)).toBe(200);
    return ((body.data as JsonObject).vantages as JsonObject).entries as JsonObject[];
  }

  it("REST and gRPC: down_in_some, one entry per vantage, 2 credits per vantage", async () => {
    const url = targets.url("/ok", { hostname: "site.test" });
    const before = (await store.usage(key.id, POLICY)).used;
    const entries = await entriesOf(url);
    expect(
      entries.map((entry) => [(entry.vantage as JsonObject).name, (entry.vantage as JsonObject).state, (entry.data as JsonObject).status]),
    ).toEqual([
      ["ap-south", "done", "down"],
      ["eu-west", "done", "up"],
      ["us-east", "done", "up"],
    ]);
    expect((await store.usage(key.id, POLICY)).used - before).toBe(6);
    const client = createClient(DiagnosticsService, createGrpcTransport({ baseUrl: serves[2]?.url ?? "" }));
    const site = await client.checkSite({ url, vantages: ["all"] }, { headers: { "x-api-key": key.secret } });
    expect(site.vantages?.verdict).toBe(VantageVerdict.DOWN_IN_SOME);
    expect(site.vantages?.entries.map((entry) => entry.data?.status)).toEqual([SiteStatus.DOWN, SiteStatus.UP, SiteStatus.UP]);
    expect((await store.usage(key.id, POLICY)).used - before).toBe(12);
  });
  it("a killed region (SIGKILL, its only process): unavailable at once with when it was last seen, not live in the list; started again, live and answered", async () => {
    const [south] = serves;
    if (south === undefined) throw new Error("no ap-south");
    await killAndRestartRegion({
      cliEnv: { SITEDIAG_STORE: `redis+cluster://${cluster.seeds}` },
      askerUrl: serves[1]?.url ?? "",
      key: key.secret,
      target: targets.url("/ok"),
      used: async () => (await store.usage(key.id, POLICY)).used,
      victim: { name: "ap-south", serve: south },
      restart: async () => {
        const serve = await startServe(settings.get("ap-south") ?? {});
        serves[0] = serve;
        return serve;
      },
    });
  }, 180_000);
});
