import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { Redis } from "ioredis";
import { issueKey } from "../../src/access/issue-key.js";
import { openStore } from "../../src/access/open-store.js";
import type { AccessStore } from "../../src/access/store.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { CLOUDFLARE_CHALLENGE } from "../fixtures/proxy-answers.js";
import { type RedisServerFixture, startRedisServer } from "../../testkit/redis-server.js";
import { eventually, type ServeProcess, startServe } from "./vantage-rig.js";

/**
 * Three vantages as docs/vantages.md deploys them, on loopback: one Redis,
 * and per vantage a `sitediag serve` with its own DNS server. The names
 * differ by vantage: `site.test` is the targets' address in eu-west and
 * us-east and does not exist in ap-south; `gate.test` leads us-east to a
 * Cloudflare-style challenge on 127.0.0.2 (the targets' port) and the others
 * to the targets. A key is issued in the shared store.
 */
export const VANTAGE_NAMES = ["ap-south", "eu-west", "us-east"] as const;

export interface ThreeVantages {
  readonly redis: RedisServerFixture;
  readonly store: AccessStore;
  readonly key: { readonly secret: string; readonly id: string };
  readonly dns: Map<string, DnsServer>;
  readonly serves: Map<string, ServeProcess>;
  /** eu-west's instance, which the tests ask. */
  readonly asker: ServeProcess;
  close(): Promise<void>;
}

export async function startThreeVantages(targetsPort: number, env: (name: string) => Readonly<Record<string, string>> = () => ({})): Promise<ThreeVantages> {
  const redis = await startRedisServer();
  const challenge = await startChallenge(targetsPort);
  const dns = new Map<string, DnsServer>();
  const serves = new Map<string, ServeProcess>();
  const started = await Promise.all(
    VANTAGE_NAMES.map(async (name) => {
      const server = await startDnsServer();
      dns.set(name, server);
      server.answer("site.test", name === "ap-south" ? "nxdomain" : { a: ["127.0.0.1"] });
      server.answer("gate.test", { a: [name === "us-east" ? "127.0.0.2" : "127.0.0.1"] });
      const own = { SITEDIAG_VANTAGE: name, SITEDIAG_DNS_SERVERS: server.server, SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8", SITEDIAG_TRACE_PORTS: String(targetsPort) };
      return [name, await startServe(Object.assign({ SITEDIAG_STORE: redis.url() }, own, env(name)))] as const;
    }),
  );
  for (const [name, serve] of started) serves.set(name, serve);
  const store = await openStore({ kind: "redis", url: redis.url() });
  const issued = await issueKey(store, "three vantages");
  if (issued === undefined) throw new Error("no key");
  // Every instance has announced itself (docs/vantages.md, membership) before the first `all`.
  const admin = new Redis(redis.url());
  await eventually(async () => ((await admin.zcard("{sitediag:vantages}:seen")) >= VANTAGE_NAMES.length ? true : undefined));
  admin.disconnect();
  const asker = serves.get("eu-west");
  if (asker === undefined) throw new Error("no eu-west");
  return {
    redis,
    store,
    key: { secret: issued.secret, id: issued.record.id },
    dns,
    serves,
    asker,
    close: async () => {
      await Promise.all([...serves.values()].map((serve) => serve.kill()));
      await store.close();
      for (const server of dns.values()) await server.close();
      challenge.close();
      await redis.close();
    },
  };
}

/** Cloudflare's managed challenge (test/fixtures/proxy-answers.ts) on 127.0.0.2 at `port`, whatever is asked. */
async function startChallenge(port: number): Promise<Server> {
  const server = createServer((_request, response) => {
    if (CLOUDFLARE_CHALLENGE.kind !== "respond") throw new Error("not an answer");
    for (const [name, value] of Object.entries(CLOUDFLARE_CHALLENGE.headers ?? {})) response.setHeader(name, typeof value === "string" ? value : [...value]);
    response.writeHead(CLOUDFLARE_CHALLENGE.status, CLOUDFLARE_CHALLENGE.statusText);
    response.end(CLOUDFLARE_CHALLENGE.body);
  });
  server.listen(port, "127.0.0.2");
  await once(server, "listening");
  return server;
}
