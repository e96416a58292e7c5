import { afterAll, beforeAll, describe, expect, it } from "vitest";
import dnsPacket from "dns-packet";
import { createDeadline } from "../../src/probe/clock.js";
import { DNSSEC_NOT_READ, MAX_ANSWER_BYTES, readAnswer, readDnssec, serverAddress } from "../../src/probe/dnssec-query.js";
import { MAX_EXTENDED_ERRORS, MAX_EXTRA_TEXT_CHARS } from "../../src/probe/extended-dns-error.js";
import type { HopOutcome, Prober } from "../../src/probe/hop-types.js";
import type { NameResolution } from "../../src/probe/name-resolution.js";
import { createProber } from "../../src/probe/prober.js";
import { USER_AGENT } from "../../src/package-info.js";
import { startDnsServer, type DnsServer } from "../fixtures/dns-server.js";
import { startRawTarget, type RawTarget } from "../fixtures/raw-targets.js";
import { seededRandom } from "../fixtures/seeded-random.js";

// DNSSEC and Extended DNS Errors: one DO query to the resolver's own servers, for details' first host only.
const ANY_PORT = { kind: "fetch-safe" } as const;
let dns: DnsServer;
let prober: Prober;
let target: RawTarget;

beforeAll(async () => {
  dns = await startDnsServer();
  target = await startRawTarget({ kind: "delayed", delayMs: 0 }, "127.0.0.1");
  prober = createProber({ allowCidrs: ["127.0.0.1/32"], dnsServers: [dns.server], userAgent: USER_AGENT });
});

afterAll(async () => {
  await prober.close();
  await Promise.all([target.close(), dns.close()]);
});

function hop(
  host: string,
  asked: { describeResolution?: boolean; readDnssec?: boolean } = { describeResolution: true, readDnssec: true },
): Promise<HopOutcome> {
  return prober.hop({ url: new URL(`http://${host}:${target.port}/`), method: "GET", timeoutMs: 5_000, ports: ANY_PORT, ...asked });
}

function resolutionOf(outcome: HopOutcome): NameResolution {
  const found =
    outcome.kind === "response" ? outcome.response.resolution : outcome.kind === "failure" ? outcome.trace.resolution : undefined;
  if (found === undefined) throw new Error(`no resolution on ${JSON.stringify(outcome)}`);
  return found;
}

const queriesOf = (name: string) =>
  dns.queries
    .filter((query) => query.name === name)
    .map(({ type, dnssecOk }) => `${type}${dnssecOk ? "+DO" : ""}`)
    .sort();

describe("the AD flag", () => {
  it("a resolver that validated the answer: validated, from one more A query with the DO bit", async () => {
    dns.answer("signed.dnssec.test", { a: ["127.0.0.1"], ad: true });
    const outcome = await hop("signed.dnssec.test");
    expect(outcome.kind).toBe("response");
    expect(resolutionOf(outcome)).toMatchObject({ dnssec: "validated", extendedErrors: [] });
    expect(queriesOf("signed.dnssec.test")).toEqual(["A", "A+DO", "AAAA", "CNAME"]);
  });

  it("an answer without AD: unvalidated", async () => {
    dns.answer("plain.dnssec.test", { a: ["127.0.0.1"] });
    expect(resolutionOf(await hop("plain.dnssec.test"))).toMatchObject({ dnssec: "unvalidated", extendedErrors: [] });
  });

  it("a described hop that is not the first host's asks nothing more: unknown", async () => {
    dns.answer("later.dnssec.test", { a: ["127.0.0.1"], ad: true });
    expect(resolutionOf(await hop("later.dnssec.test", { describeResolution: true }))).toMatchObject({ dnssec: "unknown" });
    expect(queriesOf("later.dnssec.test")).toEqual(["A", "AAAA", "CNAME"]);
  });

  it("without details exactly today's queries: A and AAAA, no DO bit", async () => {
    dns.answer("bare.dnssec.test", { rcode: "servfail", ede: [{ code: 6, text: "bogus" }] });
    const outcome = await hop("bare.dnssec.test", { readDnssec: true });
    expect(outcome).toMatchObject({
      kind: "failure",
      failure: { cause: "ESERVFAIL", reason: "DNS lookup failed: the name server reported a failure" },
    });
    expect(queriesOf("bare.dnssec.test")).toContain("A");
    expect(dns.queries.filter((query) => query.name === "bare.dnssec.test" && (query.dnssecOk || query.type === "CNAME"))).toEqual([]);
  });
});

describe("Extended DNS Errors name the failure", () => {
  it("SERVFAIL with EDE 6 DNSSEC Bogus: dns_dnssec_bogus, the error and its text in the reason, dnssec bogus", async () => {
    dns.answer("bogus.dnssec.test", { rcode: "servfail", ede: [{ code: 6, text: "RRSIG for bogus.dnssec.test. A expired" }] });
    const outcome = await hop("bogus.dnssec.test");
    expect(outcome).toMatchObject({
      kind: "failure",
      failure: {
        stage: "dns",
        timedOut: false,
        cause: "EDE_DNSSEC_BOGUS",
        reason:
          'DNS lookup failed: DNSSEC validation failed (the answer is bogus) (Extended DNS Error 6 DNSSEC Bogus: "RRSIG for bogus.dnssec.test. A expired")',
      },
    });
    expect(resolutionOf(outcome)).toMatchObject({
      code: "dns_dnssec_bogus",
      rcode: "SERVFAIL",
      dnssec: "bogus",
      extendedErrors: [{ infoCode: 6, name: "DNSSEC Bogus", extraText: "RRSIG for bogus.dnssec.test. A expired" }],
    });
  });

  it("the small mapping: signature expired, blocked (with NXDOMAIN), no reachable authority; an unmapped code keeps the lookup's code and adds its text", async () => {
    dns.answer("expired.dnssec.test", { rcode: "servfail", ede: [{ code: 7 }] });
    dns.answer("blocked.dnssec.test", { rcode: "nxdomain", ede: [{ code: 15, text: "malware list" }] });
    dns.answer("far.dnssec.test", { rcode: "servfail", ede: [{ code: 22 }] });
    dns.answer("other.dnssec.test", { rcode: "servfail", ede: [{ code: 0, text: "upstream said no" }] });
    const codes = await Promise.all(
      ["expired", "blocked", "far", "other"].map(async (name) => resolutionOf(await hop(`${name}.dnssec.test`))),
    );
    expect(codes.map(({ code, dnssec }) => [code, dnssec])).toEqual([
      ["dns_dnssec_signature_expired", "bogus"],
      ["dns_blocked", "unvalidated"],
      ["dns_authority_unreachable", "unknown"],
      ["dns_server_failure", "unknown"],
    ]);
    const other = await hop("other.dnssec.test");
    expect(other).toMatchObject({
      failure: { reason: 'DNS lookup failed: the name server reported a failure (Extended DNS Error 0 Other Error: "upstream said no")' },
    });
  });

  it("a hostile text: control bytes and bidi overrides replaced, invalid UTF-8 read leniently, 160 characters at most; at most four errors kept", async () => {
    const hostile = Buffer.concat([
      Buffer.from("\u001b[31m\u202eevil\u0000\r\n", "utf8"),
      Buffer.from([0xff, 0xfe]),
      Buffer.from("x".repeat(500)),
    ]);
    dns.answer("hostile.dnssec.test", {
      rcode: "servfail",
      ede: [...Array.from({ length: 5 }, () => ({ code: 6, text: hostile })), { data: new Uint8Array([1]) }],
    });
    const outcome = await hop("hostile.dnssec.test");
    const resolution = resolutionOf(outcome);
    expect(resolution.extendedErrors).toHaveLength(MAX_EXTENDED_ERRORS);
    for (const { extraText } of resolution.extendedErrors) {
      expect(extraText.length).toBeLessThanOrEqual(MAX_EXTRA_TEXT_CHARS);
      // eslint-disable-next-line no-control-regex
      expect(extraText).not.toMatch(/[\u0000-\u001f\u202e]/);
      expect(extraText.startsWith("\ufffd[31m\ufffdevil")).toBe(true);
    }
    // eslint-disable-next-line no-control-regex
    expect(outcome.kind === "failure" && outcome.failure.reason).not.toMatch(/[\u0000-\u001f]/);
  });
});

describe("bounded and total", () => {
  it("a server that never answers the DO query: unknown, within the reading's own bound", async () => {
    dns.answer("mute.dnssec.test", "never");
    const deadline = createDeadline();
    expect(await readDnssec("mute.dnssec.test", [dns.server], deadline.signal)).toEqual(DNSSEC_NOT_READ);
  });

  it("ended at once by the hop's signal", async () => {
    dns.answer("cut.dnssec.test", "never");
    const deadline = createDeadline();
    const reading = readDnssec("cut.dnssec.test", [dns.server], deadline.signal);
    deadline.abort();
    expect(await reading).toEqual(DNSSEC_NOT_READ);
  });

  it("every datagram read to a value: 3,000 seeded mutations of a real answer, and datagrams past the cap unread", () => {
    const random = seededRandom(40);
    const answer = dnsPacket.encode({
      type: "response",
      id: 7,
      flags: dnsPacket.AUTHENTIC_DATA | 2,
      questions: [{ type: "A", name: "x.test" }],
      additionals: [
        {
          type: "OPT",
          name: ".",
          udpPayloadSize: 1232,
          extendedRcode: 0,
          ednsVersion: 0,
          flags: 0,
          flag_do: false,
          options: [{ code: 15, data: Buffer.from([0, 6, 65, 66]) } as never],
        },
      ],
    });
    for (let i = 0; i < 3_000; i++) {
      const bytes = Buffer.from(answer);
      for (let flips = 1 + Math.floor(random() * 6); flips > 0; flips--)
        bytes[2 + Math.floor(random() * (bytes.length - 2))] = Math.floor(random() * 256);
      const cut = bytes.subarray(0, 2 + Math.floor(random() * (bytes.length - 1)));
      for (const message of [bytes, cut]) {
        const reading = readAnswer(message, 7, "x.test");
        expect(reading === null || ["validated", "unvalidated", "bogus", "unknown"].includes(reading.state)).toBe(true);
      }
    }
    expect(readAnswer(answer, 7, "x.test")).toMatchObject({ state: "bogus", rcode: "SERVFAIL" });
    expect(readAnswer(answer, 8, "x.test")).toBeNull();
    expect(readAnswer(answer, 7, "y.test")).toBeNull();
    expect(readAnswer(Buffer.concat([answer, Buffer.alloc(MAX_ANSWER_BYTES)]), 7, "x.test")).toBeNull();
  });

  it("server spellings: the forms SITEDIAG_DNS_SERVERS and c-ares write, nothing else", () => {
    expect(serverAddress("127.0.0.1")).toEqual({ address: "127.0.0.1", port: 53, family: 4 });
    expect(serverAddress("127.0.0.1:5353")).toEqual({ address: "127.0.0.1", port: 5353, family: 4 });
    expect(serverAddress("::1")).toEqual({ address: "::1", port: 53, family: 6 });
    expect(serverAddress("[::1]:5353")).toEqual({ address: "::1", port: 5353, family: 6 });
    for (const bad of ["", "resolver.test", "127.0.0.1:0", "127.0.0.1:70000", "[x]:53", "[::1]:"])
      expect(serverAddress(bad), bad).toBeNull();
  });
});
