import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PortRule, Prober } from "../../../src/probe/hop-types.js";
import { createProber } from "../../../src/probe/prober.js";
import { USER_AGENT } from "../../../src/package-info.js";
import { startDnsServer, type DnsServer } from "../../fixtures/dns-server.js";
import { startRawTarget, type RawTarget } from "../../fixtures/raw-targets.js";

const FETCH_SAFE: PortRule = { kind: "fetch-safe" };
const WEB_ONLY: PortRule = { kind: "only", ports: [80, 443] };

let dns: DnsServer;
let prober: Prober;
let listener: RawTarget;

beforeAll(async () => {
  dns = await startDnsServer();
  dns.answer("localhost", { a: ["127.0.0.1"] });
  listener = await startRawTarget({ kind: "silent" });
  // No allow list: loopback is as forbidden here as in production.
  prober = createProber({ allowCidrs: [], dnsServers: [dns.server], userAgent: USER_AGENT });
});

afterAll(async () => {
  await prober.close();
  await listener.close();
  await dns.close();
});

describe("screen: checks that need no DNS", () => {
  it.each(["ftp://a.test/", "file:///etc/passwd", "javascript:alert(1)", "data:text/plain,hi", "ws://a.test/", "gopher://a.test/"])(
    "%s is refused by the scheme rule",
    (url) => expect(prober.screen(new URL(url), FETCH_SAFE)?.rule).toBe("scheme"),
  );

  it.each(["http://user:pass@a.test/", "http://user@a.test/", "https://:secret@a.test/", "http://127.0.0.1:80@a.test/"])(
    "%s is refused by the credentials rule",
    (url) => expect(prober.screen(new URL(url), FETCH_SAFE)?.rule).toBe("credentials"),
  );

  it("refuses URLs over 2048 characters, accepts one at the limit", () => {
    const base = "http://a.test/";
    expect(prober.screen(new URL(base + "a".repeat(2048 - base.length + 1)), FETCH_SAFE)?.rule).toBe("url_too_long");
    expect(prober.screen(new URL(base + "a".repeat(2048 - base.length)), FETCH_SAFE)).toBeNull();
  });

  it.each([
    ["http://a.test/", WEB_ONLY, null],
    ["https://a.test:443/", WEB_ONLY, null],
    ["http://a.test:443/", WEB_ONLY, null],
    ["http://a.test:8080/", WEB_ONLY, "port"],
    ["http://a.test:79/", WEB_ONLY, "port"],
    ["http://a.test:8080/", FETCH_SAFE, null],
    ["http://a.test:10081/", FETCH_SAFE, null],
    ["http://a.test:2/", FETCH_SAFE, null],
    ["http://a.test:1/", FETCH_SAFE, "bad_port"],
    ["http://a.test:25/", FETCH_SAFE, "bad_port"],
    ["http://a.test:6679/", FETCH_SAFE, "bad_port"],
    ["http://a.test:10080/", FETCH_SAFE, "bad_port"],
    ["http://a.test:0/", FETCH_SAFE, "bad_port"],
  ] as const)("%s under %o: %s", (url, ports, rule) => {
    expect(prober.screen(new URL(url), ports)?.rule ?? null).toBe(rule);
  });

  it("names the rule and the address in the reason", () => {
    expect(prober.screen(new URL("http://10.0.0.1/"), FETCH_SAFE)).toEqual({
      rule: "non_public_address",
      code: "input_non_public_address",
      reason: "Target 10.0.0.1 is not a public address (Private-Use, RFC 1918)",
      range: { cidr: "10.0.0.0/8", name: "Private-Use", rfc: "RFC 1918" },
    });
    expect(prober.screen(new URL("http://a.test:8080/"), WEB_ONLY)?.reason).toBe("Port 8080 is not allowed; allowed ports: 80, 443");
  });

  it.each([
    ["http://10.0.0.1/", { cidr: "10.0.0.0/8", name: "Private-Use", rfc: "RFC 1918" }],
    ["http://169.254.169.254/latest/meta-data/", { cidr: "169.254.0.0/16", name: "Link Local", rfc: "RFC 3927" }],
    ["http://[fd00::]/", { cidr: "fc00::/7", name: "Unique-Local", rfc: "RFC 4193" }],
    ["http://[::ffff:10.1.2.3]/", { cidr: "10.0.0.0/8", name: "Private-Use", rfc: "RFC 1918" }],
  ] as const)("IP literal %s names the address-table row that refused it", (url, range) => {
    expect(prober.screen(new URL(url), FETCH_SAFE)).toMatchObject({ rule: "non_public_address", code: "input_non_public_address", range });
  });

  it("every other rule refuses with its own code and no range", () => {
    const cases = [
      ["ftp://a.test/", FETCH_SAFE, "input_scheme"],
      ["http://user:pass@a.test/", FETCH_SAFE, "input_credentials"],
      ["http://a.test:8080/", WEB_ONLY, "input_port"],
      ["http://a.test:25/", FETCH_SAFE, "input_bad_port"],
      [`http://a.test/${"a".repeat(2048)}`, FETCH_SAFE, "input_url_too_long"],
    ] as const;
    for (const [url, ports, code] of cases) {
      const refusal = prober.screen(new URL(url), ports);
      expect(refusal?.code, url).toBe(code);
      expect(refusal && "range" in refusal, url).toBe(false);
    }
  });

  it.each(["http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://[fd00::1]/", "http://[fe80::1]/", "http://100.64.0.1/"])(
    "IP literal %s is refused before any packet",
    (url) => expect(prober.screen(new URL(url), FETCH_SAFE)?.rule).toBe("non_public_address"),
  );
});

describe("every spelling WHATWG URL normalises to a loopback or unspecified address is refused, and nothing connects", () => {
  const tricks = (port: number) => [
    `http://127.1:${port}/`,
    `http://0x7f.1:${port}/`,
    `http://2130706433:${port}/`,
    `http://017700000001:${port}/`,
    `http://0177.0.0.1:${port}/`,
    `http://0x7f000001:${port}/`,
    `http://[::ffff:7f00:1]:${port}/`,
    `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/`,
    `http://[::1]:${port}/`,
    `http://[::]:${port}/`,
    `http://0.0.0.0:${port}/`,
    `http://0:${port}/`,
    `http://127.0.0.1.:${port}/`,
    `http://%31%32%37.0.0.1:${port}/`,
    `http://１２７.０.０.１:${port}/`,
    `http://127.0.0.1\\@a.test:${port}/`,
    `http://localhost.:${port}/`,
    `http://LOCALHOST:${port}/`,
  ];

  it("each is refused as non-public", async () => {
    for (const url of tricks(listener.port)) {
      const outcome = await prober.hop({ url: new URL(url), method: "GET", timeoutMs: 2_000, ports: FETCH_SAFE });
      expect(outcome.kind, url).toBe("refused");
      if (outcome.kind === "refused") expect(outcome.refusal.rule, url).toBe("non_public_address");
    }
    expect(listener.connections()).toBe(0);
  });

  it("credentials in front of a loopback host are refused as credentials", async () => {
    const outcome = await prober.hop({
      url: new URL(`http://a.test@127.0.0.1:${listener.port}/`),
      method: "GET",
      timeoutMs: 2_000,
      ports: FETCH_SAFE,
    });
    expect(outcome).toMatchObject({ kind: "refused", refusal: { rule: "credentials" } });
    expect(listener.connections()).toBe(0);
  });

  it("a backslash before @ makes the host the name in front, never the address behind", async () => {
    const outcome = await prober.hop({
      url: new URL(`http://nowhere.test\\@127.0.0.1:${listener.port}/`),
      method: "GET",
      timeoutMs: 2_000,
      ports: FETCH_SAFE,
    });
    expect(outcome).toMatchObject({ kind: "failure", failure: { stage: "dns", cause: "ENOTFOUND" } });
    expect(dns.queries.some((query) => query.name === "nowhere.test")).toBe(true);
    expect(listener.connections()).toBe(0);
  });
});
