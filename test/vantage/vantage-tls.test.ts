import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sharedClockMs } from "../../src/probe/clock.js";
import { createRedisFanout, type RedisFanout } from "../../src/vantage/redis/redis-fanout.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { quietLoopbackPort } from "../../testkit/loopback-ports.js";
import { redisAvailability } from "../../testkit/redis-server.js";
import { collect, eventually, type ServeProcess, startServe } from "../fixtures/vantage-rig.js";

// A vantage whose instance reaches the Redis only over TLS (rediss://), as
// docs/vantages.md has regions do across the internet: its jobs and answers
// cross as any other's. This process dispatches over the server's plain port.
const availability = redisAvailability();

describe.skipIf(!availability.available)("a vantage on rediss://", () => {
  let dir: string;
  let redis: ChildProcess | undefined;
  let plainPort: number;
  let tlsPort: number;
  let targets: HttpTargets;
  let serve: ServeProcess | undefined;
  let dispatcher: RedisFanout | undefined;

  beforeAll(async () => {
    const pki = await getTestPki();
    dir = mkdtempSync(join(tmpdir(), "sitediag-redis-tls-"));
    for (const [name, text] of [
      ["ca.pem", pki.caPem],
      ["key.pem", pki.valid.key],
      ["cert.pem", pki.valid.cert],
    ] as const)
      writeFileSync(join(dir, name), text);
    // Redis binds both and keeps them: from the range for servers, the TLS port beside the plain one.
    plainPort = await quietLoopbackPort([1]);
    tlsPort = plainPort + 1;
    const args = [
      "--port",
      String(plainPort),
      "--tls-port",
      String(tlsPort),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "no",
    ];
    const tls = [
      "--tls-cert-file",
      join(dir, "cert.pem"),
      "--tls-key-file",
      join(dir, "key.pem"),
      "--tls-ca-cert-file",
      join(dir, "ca.pem"),
      "--tls-auth-clients",
      "no",
    ];
    redis = spawn(process.env.REDIS_SERVER_BINARY ?? "redis-server", [...args, ...tls], { stdio: "ignore" });
    await eventually(async () => {
      const client = new Redis({
        port: plainPort,
        host: "127.0.0.1",
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      client.on("error", () => undefined);
      try {
        await client.connect();
        return (await client.ping()) === "PONG" ? true : undefined;
      } catch {
        return undefined;
      } finally {
        client.disconnect();
      }
    });
    targets = await startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 } } });
    // Node trusts the test CA through NODE_EXTRA_CA_CERTS, as an operator's private CA would be.
    serve = await startServe({
      SITEDIAG_STORE: `rediss://localhost:${tlsPort}/0`,
      SITEDIAG_VANTAGE: "tls-west",
      SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8",
      NODE_EXTRA_CA_CERTS: join(dir, "ca.pem"),
    });
    dispatcher = await createRedisFanout({
      location: { kind: "redis", url: `redis://127.0.0.1:${plainPort}/0` },
      self: { name: "tester" },
      maxJobs: 1,
    });
  }, 60_000);

  afterAll(async () => {
    await dispatcher?.close();
    await serve?.kill();
    await targets?.close();
    redis?.kill("SIGKILL");
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("announces itself, answers its jobs and is ready", async () => {
    if (dispatcher === undefined || serve === undefined) throw new Error("not started");
    const fanout = dispatcher;
    await eventually(async () => ((await fanout.alive()).some((info) => info.name === "tls-west") ? true : undefined));
    const entries = await collect(
      fanout,
      { kind: "site-check", raw: targets.url("/ok"), options: {} },
      ["tls-west"],
      sharedClockMs() + 10_000,
    );
    expect(entries).toEqual([expect.objectContaining({ state: "answered", outcome: expect.objectContaining({ kind: "result" }) })]);
    expect(await fetch(`${serve.url}/readyz`).then((response) => response.status)).toBe(200);
  });
});
