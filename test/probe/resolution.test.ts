import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HopOutcome, Prober } from "../../src/probe/hop-types.js";
import { createProber } from "../../src/probe/prober.js";
import { USER_AGENT } from "../../src/package-info.js";
import { startDnsServer, type DnsServer } from "../fixtures/dns-server.js";
import { startRawTarget, type RawTarget } from "../fixtures/raw-targets.js";
import { closedLoopbackPort } from "../../testkit/loopback-ports.js";

const ANY_PORT = { kind: "fetch-safe" } as const;
let dns: DnsServer;
let prober: Prober;
/** The "public" side: 127.0.0.1 is allowed in these tests. */
let allowed: RawTarget;
/** The "private" side: 127.0.0.2 is not in the allow list. */
let forbidden: RawTarget;

beforeAll(async () => {
  dns = await startDnsServer();
  allowed = await startRawTarget({ kind: "delayed", delayMs: 0 }, "127.0.0.1");
  forbidden = await startRawTarget({ kind: "delayed", delayMs: 0 }, "127.0.0.2");
  prober = createProber({ allowCidrs: ["127.0.0.1/32"], dnsServers: [dns.server], userAgent: USER_AGENT });
});

afterAll(async () => {
  await prober.close();
  await Promise.all([allowed.close(), forbidden.close(), dns.close()]);
});

function hop(url: string, timeoutMs = 2_000): Promise<HopOutcome> {
  return prober.hop({ url: new URL(url), method: "GET", timeoutMs, ports: ANY_PORT });
}

describe("dns stage", () => {
  it("NXDOMAIN is 'no such host'", async () => {
    dns.answer("gone.invalid", "nxdomain");
    const outcome = await hop("http://gone.invalid/");
    expect(outcome).toMatchObject({
      kind: "failure",
      failure: { stage: "dns", cause: "ENOTFOUND", reason: "DNS lookup failed: no such host", timedOut: false, remoteAddress: null },
    });
  });

  it("a name with neither A nor AAAA records is ENODATA", async () => {
    dns.answer("empty.test", {});
    expect(await hop("http://empty.test/")).toMatchObject({ kind: "failure", failure: { stage: "dns", cause: "ENODATA" } });
  });

  it("SERVFAIL is reported as such", async () => {
    dns.answer("broken.test", "servfail");
    expect(await hop("http://broken.test/")).toMatchObject({ kind: "failure", failure: { stage: "dns", cause: "ESERVFAIL" } });
  });

  it("a server that never answers times out at dns", async () => {
    dns.answer("silent.test", "never");
    const outcome = await hop("http://silent.test/", 300);
    expect(outcome).toMatchObject({ kind: "failure", failure: { stage: "dns", cause: "ETIMEOUT", timedOut: true } });
    if (outcome.kind === "failure") expect(outcome.failure.elapsedMs).toBeLessThan(1_500);
  });
});

describe("names are judged by every answer", () => {
  it("a name resolving to an allowed address is fetched from it, with its DNS time", async () => {
    dns.answer("site.test", { a: ["127.0.0.1"] });
    const outcome = await hop(`http://site.test:${allowed.port}/`);
    if (outcome.kind !== "response") throw new Error(JSON.stringify(outcome));
    expect(outcome.response.remoteAddress).toBe("127.0.0.1");
    expect(outcome.response.timings.dnsMs).not.toBeNull();
  });

  it("a mix of allowed and forbidden answers is refused, and neither listener is reached", async () => {
    dns.answer("mixed.test", { a: ["127.0.0.1", "127.0.0.2"] });
    const before = allowed.connections();
    const outcome = await hop(`http://mixed.test:${allowed.port}/`);
    expect(outcome).toMatchObject({ kind: "refused", refusal: { rule: "non_public_address" } });
    if (outcome.kind === "refused")
      expect(outcome.refusal.reason).toBe("Target mixed.test resolves to 127.0.0.2, which is not a public address (Loopback, RFC 1122)");
    expect(allowed.connections()).toBe(before);
    expect(forbidden.connections()).toBe(0);
  });

  it("a name answered with a private address is refused naming the range, with its own code", async () => {
    dns.answer("private.test", { a: ["10.0.0.1"] });
    expect(await hop(`http://private.test:${allowed.port}/`)).toMatchObject({
      kind: "refused",
      refusal: {
        rule: "non_public_address",
        code: "input_resolves_non_public",
        reason: "Target private.test resolves to 10.0.0.1, which is not a public address (Private-Use, RFC 1918)",
        range: { cidr: "10.0.0.0/8", name: "Private-Use", rfc: "RFC 1918" },
      },
    });
    dns.answer("metadata.test", { aaaa: ["fd00::1"] });
    expect(await hop(`http://metadata.test:${allowed.port}/`)).toMatchObject({
      kind: "refused",
      refusal: { code: "input_resolves_non_public", range: { cidr: "fc00::/7", name: "Unique-Local", rfc: "RFC 4193" } },
    });
  });

  it("a private AAAA among public A answers is refused", async () => {
    dns.answer("v6mix.test", { a: ["127.0.0.1"], aaaa: ["fd00::1"] });
    expect(await hop(`http://v6mix.test:${allowed.port}/`)).toMatchObject({ kind: "refused", refusal: { rule: "non_public_address" } });
  });

  it("rebinding: the answer that changes after the check is never dialled", async () => {
    // Same port on both loopback addresses, so only the address decides which listener a dial reaches.
    const publicTwin = await startRawTarget({ kind: "delayed", delayMs: 0 }, "127.0.0.1");
    const samePort = publicTwin.port;
    const privateSide = await startRawTarget({ kind: "delayed", delayMs: 0 }, "127.0.0.2", samePort);
    try {
      dns.answer("rebind.test", { a: ["127.0.0.1"] }, { a: ["127.0.0.2"] });
      const queriesBefore = dns.queries.filter((query) => query.name === "rebind.test" && query.type === "A").length;
      const first = await hop(`http://rebind.test:${samePort}/`);
      expect(first.kind).toBe("response");
      // One lookup per hop: nothing asks the name again between the check and the connect.
      expect(dns.queries.filter((query) => query.name === "rebind.test" && query.type === "A").length - queriesBefore).toBe(1);
      const second = await hop(`http://rebind.test:${samePort}/`);
      expect(second).toMatchObject({ kind: "refused", refusal: { rule: "non_public_address" } });
      expect(publicTwin.connections()).toBe(1);
      expect(privateSide.connections()).toBe(0);
    } finally {
      await Promise.all([publicTwin.close(), privateSide.close()]);
    }
  });
});

describe("connection attempts", () => {
  it("falls back from an address that refuses to the next one and reports the one used", async () => {
    // ::1 first (RFC 8305 order), where nothing listens on this port; then 127.0.0.1.
    const dual = createProber({ allowCidrs: ["127.0.0.1/32", "::1/128"], dnsServers: [dns.server], userAgent: USER_AGENT });
    dns.answer("dual.test", { a: ["127.0.0.1"], aaaa: ["::1"] });
    const outcome = await dual.hop({ url: new URL(`http://dual.test:${allowed.port}/`), method: "GET", timeoutMs: 2_000, ports: ANY_PORT });
    await dual.close();
    if (outcome.kind !== "response") throw new Error(JSON.stringify(outcome));
    expect(outcome.response.remoteAddress).toBe("127.0.0.1");
    expect(outcome.response.remoteFamily).toBe(4);
  });

  it("when every address refuses, the failure names the last one dialled", async () => {
    const port = await closedLoopbackPort();
    dns.answer("closed.test", { a: ["127.0.0.1"] });
    expect(await hop(`http://closed.test:${port}/`)).toMatchObject({
      kind: "failure",
      failure: { stage: "connect", cause: "ECONNREFUSED", remoteAddress: "127.0.0.1" },
    });
  });
});
