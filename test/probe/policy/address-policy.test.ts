import { describe, expect, it } from "vitest";
import { createAddressPolicy } from "../../../src/probe/policy/address-policy.js";
import { IPV4_EMBEDDING_RANGES, IPV4_RANGES, IPV6_RANGES } from "../../../src/probe/policy/address-ranges.js";
import { cidrContains, cidrLast, formatIp, parseCidr } from "../../../src/probe/policy/ip-address.js";

const policy = createAddressPolicy([]);

function edges(cidr: string): [string, string] {
  const block = parseCidr(cidr);
  return [formatIp({ family: block.family, value: block.first }), formatIp({ family: block.family, value: cidrLast(block) })];
}

function nestedIn(inner: string, outer: string): boolean {
  const a = parseCidr(inner);
  const b = parseCidr(outer);
  return a.prefix >= b.prefix && cidrContains(b, { family: a.family, value: a.first });
}

describe("every table row, at both edges", () => {
  const rows = [...IPV4_RANGES, ...IPV6_RANGES].flatMap((row) => edges(row.cidr).map((address) => ({ row, address })));
  it.each(rows.map(({ row, address }) => [address, row.cidr, row.name, row.allowed] as const))(
    "%s (edge of %s, %s) allowed=%s",
    (address, cidr, _name, allowed) => {
      const verdict = policy.judge(address);
      expect(verdict.allowed).toBe(allowed);
      // The deciding row is this one, or a more specific row nested inside it.
      if (!verdict.allowed) expect(nestedIn(verdict.range?.cidr ?? "", cidr), `${verdict.range?.cidr} within ${cidr}`).toBe(true);
    },
  );
});

describe("addresses just outside refused blocks are public", () => {
  it.each([
    "9.255.255.255",
    "11.0.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "126.255.255.255",
    "128.0.0.0",
    "169.253.255.255",
    "169.255.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "191.255.255.255",
    "192.0.1.0",
    "192.0.3.0",
    "192.88.98.255",
    "192.88.100.0",
    "192.167.255.255",
    "192.169.0.0",
    "198.17.255.255",
    "198.20.0.0",
    "198.51.99.255",
    "198.51.101.0",
    "203.0.112.255",
    "203.0.114.0",
    "223.255.255.255",
    "1.0.0.0",
    "8.8.8.8",
    "2000::",
    "2fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
    "3ffe:ffff::",
    "3fff:1000::",
    "2001:200::",
    "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff",
    "2001:db9::",
    "2606:4700::1111",
  ])("%s is allowed", (address) => {
    expect(policy.judge(address)).toMatchObject({ allowed: true, by: "public" });
  });

  it.each(["1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "4000::", "5eff:ffff::", "5f01::", "fbff::"])(
    "%s, outside 2000::/3, is refused",
    (address) => {
      expect(policy.judge(address).allowed).toBe(false);
    },
  );
});

describe("IPv4 carried in IPv6 is judged as the IPv4 inside", () => {
  it.each([
    ["::ffff:10.0.0.1", false],
    ["::ffff:7f00:1", false],
    ["::ffff:8.8.8.8", true],
    ["::10.0.0.1", false],
    ["::8.8.8.8", true],
    ["::ffff:0:a00:1", false],
    ["::ffff:0:808:808", true],
    ["64:ff9b::a9fe:a9fe", false],
    ["64:ff9b::808:808", true],
    ["2002:a00:1::", false],
    ["2002:c0a8:101::1", false],
    ["2002:808:808::1", true],
  ] as const)("%s allowed=%s", (address, allowed) => {
    expect(policy.judge(address).allowed).toBe(allowed);
  });

  it("every embedding block is unwrapped at both edges (0.0.0.0 and 255.255.255.255 inside: both refused)", () => {
    for (const row of IPV4_EMBEDDING_RANGES) {
      for (const address of edges(row.cidr)) expect(policy.judge(address).allowed, `${address} in ${row.cidr}`).toBe(false);
    }
  });

  it("names the carrying block in the verdict", () => {
    expect(policy.judge("::ffff:10.0.0.1")).toMatchObject({
      allowed: false,
      via: { cidr: "::ffff:0:0/96" },
      range: { cidr: "10.0.0.0/8" },
    });
  });

  it("Teredo and the local-use NAT64 prefix are refused, not unwrapped", () => {
    expect(policy.judge("2001:0:4136:e378:8000:63bf:f7f7:f7f7")).toMatchObject({ allowed: false, range: { cidr: "2001::/32" } });
    expect(policy.judge("64:ff9b:1::808:808")).toMatchObject({ allowed: false, range: { cidr: "64:ff9b:1::/48" } });
  });
});

describe("SITEDIAG_ALLOW_CIDRS widens the table, and only by what it names", () => {
  const widened = createAddressPolicy(["127.0.0.0/8", "::1/128", "10.1.0.0/16"]);
  it.each([
    ["127.0.0.1", true],
    ["127.255.255.255", true],
    ["::1", true],
    ["::ffff:127.0.0.1", true],
    ["10.1.255.255", true],
    ["10.2.0.0", false],
    ["169.254.169.254", false],
    ["::2", false],
    ["fd00::1", false],
  ] as const)("%s allowed=%s", (address, allowed) => {
    expect(widened.judge(address).allowed).toBe(allowed);
  });
});

it("a string that is not an IP address is refused", () => {
  expect(policy.judge("localhost").allowed).toBe(false);
  expect(policy.judge("fe80::1%eth0").allowed).toBe(false);
});
