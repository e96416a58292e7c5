import { once } from "node:events";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
    const outcome = await prober.tlsVersions({ url: new URL(`https://127.0.0.1:${String(silentPort)}/`), address: "127.0.0.1", timeoutMs: 400, ports: FETCH_SAFE });
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
    const outcome = await prober.tlsVersions({ url: new URL(`https://mixed.test:${String(silentPort)}/`), address: "127.0.0.1", timeoutMs: 400, ports: FETCH_SAFE });
    expect(outcome).toMatchObject({ kind: "refused", refusal: { code: "input_resolves_non_public" } });
    const literal = await prober.tlsVersions({ url: new URL(`https://127.0.1.9:${String(silentPort)}/`), address: "127.0.1.9", timeoutMs: 400, ports: FETCH_SAFE });
    expect(literal.kind).toBe("refused");
    expect(accepted).toBe(before);
  });

  it("refuses a name whose answer no longer holds the address (no_address), and an http URL: nothing sent", async () => {
    const before = accepted;
    const moved = await prober.tlsVersions({ url: new URL(`https://moved.test:${String(silentPort)}/`), address: "127.0.0.1", timeoutMs: 400, ports: FETCH_SAFE });
    expect(moved).toMatchObject({ kind: "refused", refusal: { rule: "no_address" } });
    const plain = await prober.tlsVersions({ url: new URL(`http://127.0.0.1:${String(silentPort)}/`), address: "127.0.0.1", timeoutMs: 400, ports: FETCH_SAFE });
    expect(plain).toMatchObject({ kind: "refused", refusal: { rule: "scheme" } });
    expect(accepted).toBe(before);
  });
});
