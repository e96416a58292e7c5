import { once } from "node:events";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { createServer as createTlsServer } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConnectionKeeper } from "../../src/probe/http/kept-connections.js";
import type { HopDeps } from "../../src/probe/hop.js";
import { createAddressPolicy } from "../../src/probe/policy/address-policy.js";
import { createResolver } from "../../src/probe/resolver.js";
import { runTlsVersions, TLS_VERSIONS, versionContexts } from "../../src/probe/tls-versions.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { loopbackProber, type LoopbackProber } from "../fixtures/test-env.js";

/**
 * The probe's version-limited handshakes against hostile or forbidden
 * targets: a TCP server that accepts and never says a word, an address
 * outside the policy, and a name whose answer no longer holds the address.
 * Each listener counts the connections it accepted.
 */
const FETCH_SAFE = { kind: "fetch-safe" } as const;

let dns: DnsServer;
let prober: LoopbackProber;
let silent: Server;
let silentPort: number;
let accepted = 0;
const sockets = new Set<Socket>();

beforeAll(async () => {
  silent = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on("error", () => undefined);
  });
  silent.listen(0, "127.0.0.1");
  await once(silent, "listening");
  silentPort = (silent.address() as AddressInfo).port;
  dns = await startDnsServer();
  dns.answer("moved.test", { a: ["127.0.0.5"] });
  dns.answer("mixed.test", { a: ["127.0.0.1", "127.0.1.9"] });
  // Only 127.0.0.0/24: 127.0.1.9 is outside the policy.
  prober = loopbackProber({ dnsServers: [dns.server], allowCidrs: ["127.0.0.0/24"] });
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await prober.close();
  await new Promise((resolve) => silent.close(resolve));
  await dns.close();
});

describe("prober.tlsVersions", () => {
  it("a server that accepts and never answers a ClientHello: each version failed at tls, timed out, ended by the one deadline", async () => {
    const outcome = await prober.tlsVersions({
      url: new URL(`https://127.0.0.1:${String(silentPort)}/`),
      address: "127.0.0.1",
      timeoutMs: 400,
      ports: FETCH_SAFE,
    });
    if (outcome.kind !== "tried") throw new Error(`expected tried, got ${outcome.kind}`);
    expect(outcome.attempts.map(({ version, outcome: came }) => [version, came])).toEqual([
      ["TLSv1.3", "failed"],
      ["TLSv1.2", "failed"],
      ["TLSv1.1", "failed"],
      ["TLSv1", "failed"],
    ]);
    for (const attempt of outcome.attempts) expect(attempt.code).toBe("tls_timeout");
    expect(accepted).toBe(4);
  });

  it("refuses an address the policy refuses: nothing sent", async () => {
    const before = accepted;
    const outcome = await prober.tlsVersions({
      url: new URL(`https://mixed.test:${String(silentPort)}/`),
      address: "127.0.0.1",
      timeoutMs: 400,
      ports: FETCH_SAFE,
    });
    expect(outcome).toMatchObject({ kind: "refused", refusal: { code: "input_resolves_non_public" } });
    const literal = await prober.tlsVersions({
      url: new URL(`https://127.0.1.9:${String(silentPort)}/`),
      address: "127.0.1.9",
      timeoutMs: 400,
      ports: FETCH_SAFE,
    });
    expect(literal.kind).toBe("refused");
    expect(accepted).toBe(before);
  });

  it("refuses a name whose answer no longer holds the address (no_address), and an http URL: nothing sent", async () => {
    const before = accepted;
    const moved = await prober.tlsVersions({
      url: new URL(`https://moved.test:${String(silentPort)}/`),
      address: "127.0.0.1",
      timeoutMs: 400,
      ports: FETCH_SAFE,
    });
    expect(moved).toMatchObject({ kind: "refused", refusal: { rule: "no_address" } });
    const plain = await prober.tlsVersions({
      url: new URL(`http://127.0.0.1:${String(silentPort)}/`),
      address: "127.0.0.1",
      timeoutMs: 400,
      ports: FETCH_SAFE,
    });
    expect(plain).toMatchObject({ kind: "refused", refusal: { rule: "scheme" } });
    expect(accepted).toBe(before);
  });
});

describe("a version this process's OpenSSL cannot offer", () => {
  it("is not_offered_locally, and no handshake of it reaches the server; the others are tried", async () => {
    const pki = await getTestPki();
    let handshakes = 0;
    const server = createTlsServer({ key: pki.valid.key, cert: pki.valid.cert, minVersion: "TLSv1.2" }, (socket) =>
      socket.on("error", () => undefined),
    );
    server.on("secureConnection", () => (handshakes += 1));
    server.on("tlsClientError", () => undefined);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const keeper = createConnectionKeeper(0);
    const deps: HopDeps = {
      addresses: createAddressPolicy(["127.0.0.0/8"]),
      resolver: createResolver({ servers: [] }),
      secureContext: undefined,
      requestHeaders: [],
      maxResponseHeadBytes: 1024,
      keeper,
      reportDefect: () => undefined,
    };
    // The prober's own contexts, but none for TLS 1.3: as a build of OpenSSL without it would have.
    const built = versionContexts();
    const contexts = () =>
      new Map(TLS_VERSIONS.map((version) => [version, version === "TLSv1.3" ? null : (built().get(version) ?? null)] as const));
    try {
      const url = new URL(`https://127.0.0.1:${String((server.address() as AddressInfo).port)}/`);
      const outcome = await runTlsVersions({ url, address: "127.0.0.1", timeoutMs: 2_000, ports: FETCH_SAFE }, deps, contexts);
      if (outcome.kind !== "tried") throw new Error(`expected tried, got ${outcome.kind}`);
      expect(outcome.attempts.map(({ version, outcome: came }) => [version, came])).toEqual([
        ["TLSv1.3", "not_offered_locally"],
        ["TLSv1.2", "accepted"],
        ["TLSv1.1", "refused"],
        ["TLSv1", "refused"],
      ]);
      expect(outcome.attempts[0]?.reason).toMatch(/cannot offer/);
      // Only the TLS 1.2 handshake completed: TLS 1.3 was never asked for.
      expect(handshakes).toBe(1);
    } finally {
      keeper.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
