import { describe, expect, it } from "vitest";
import { cidrContains, formatIp, parseCidr, parseIp } from "../../../src/probe/policy/ip-address.js";
import { seededRandom } from "../../fixtures/seeded-random.js";

const SEED = 0x1f00d;

/** An address written out group by group, zero groups frequent so "::" runs of every length and place occur. */
function randomIpv6(random: () => number): string {
  const groups = Array.from({ length: 8 }, () => (random() < 0.45 ? 0 : Math.floor(random() * 0x10000)));
  return groups.map((group) => group.toString(16)).join(":");
}

function randomIpv4(random: () => number): string {
  return Array.from({ length: 4 }, () => Math.floor(random() * (random() < 0.2 ? 2 : 256))).join(".");
}

/** What a URL does with the host, the canonical form the service shows (WHATWG's serialiser, RFC 5952 compression). */
function urlForm(address: string): string {
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

/** The slow, obvious reading: eight groups, shifted in one at a time. */
function referenceValue(address: string): bigint {
  const canonical = urlForm(address);
  const [left = "", right] = canonical.split("::");
  const leftGroups = left === "" ? [] : left.split(":");
  const rightGroups = right === undefined || right === "" ? [] : right.split(":");
  const groups =
    right === undefined
      ? leftGroups
      : [...leftGroups, ...Array<string>(8 - leftGroups.length - rightGroups.length).fill("0"), ...rightGroups];
  return groups.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}

describe("parseIp and formatIp, against a URL's own serialiser (seeded)", () => {
  it("2,000 IPv6 addresses: the same value as the slow reading, and formatted as a URL writes the host", () => {
    const random = seededRandom(SEED);
    for (let i = 0; i < 2000; i += 1) {
      const address = randomIpv6(random);
      const ip = parseIp(address);
      expect(ip?.value, address).toBe(referenceValue(address));
      expect(ip === null ? null : formatIp(ip), address).toBe(urlForm(address));
    }
  });

  it("IPv6 with a dotted IPv4 tail reads the tail as the last two groups", () => {
    const random = seededRandom(SEED ^ 0x4);
    for (let i = 0; i < 500; i += 1) {
      const v4 = randomIpv4(random);
      const address = `::ffff:${v4}`;
      const ip = parseIp(address);
      expect(ip === null ? null : formatIp(ip), address).toBe(urlForm(address));
    }
  });

  it("2,000 IPv4 addresses come back as written (no leading zeros: node:net refuses those)", () => {
    const random = seededRandom(SEED ^ 0x6);
    for (let i = 0; i < 2000; i += 1) {
      const address = randomIpv4(random);
      const ip = parseIp(address);
      expect(ip?.family).toBe(4);
      expect(ip === null ? null : formatIp(ip)).toBe(address);
    }
    expect(formatIp({ family: 4, value: 0xffffffffn })).toBe("255.255.255.255");
    expect(parseIp("255.255.255.255")?.value).toBe(0xffffffffn);
  });

  it("a block contains exactly the addresses whose leading prefix bits match, for every prefix length", () => {
    const random = seededRandom(SEED ^ 0x8);
    for (let prefix = 0; prefix <= 128; prefix += 1) {
      const block = parseCidr(`${randomIpv6(random)}/${prefix}`);
      const inside = block.first | (BigInt(Math.floor(random() * 2 ** 32)) & ((1n << BigInt(128 - prefix)) - 1n));
      expect(cidrContains(block, { family: 6, value: inside })).toBe(true);
      if (prefix > 0) {
        const flipped = inside ^ (1n << BigInt(128 - prefix));
        expect(cidrContains(block, { family: 6, value: flipped })).toBe(false);
      }
      expect(cidrContains(block, { family: 4, value: inside & 0xffffffffn })).toBe(false);
    }
  });

  it("refuses what is not an address", () => {
    for (const text of ["", "1.2.3", "1.2.3.4.5", "01.2.3.4", "256.1.1.1", "::1%lo", "[::1]", "1::2::3", "g::1", " 1.2.3.4"]) {
      expect(parseIp(text), text).toBeNull();
    }
  });
});

describe("ip-address", () => {
  it.each([
    ["::ffff:1.2.3.4", "::ffff:102:304"],
    ["2001:DB8:0:0:0:0:0:1", "2001:db8::1"],
    ["::", "::"],
    ["fe80::", "fe80::"],
    ["010.1.1.1", null],
    ["1.2.3", null],
    ["255.255.255.255", "255.255.255.255"],
  ] as const)("%s -> %s", (text, canonical) => {
    const ip = parseIp(text);
    expect(ip === null ? null : formatIp(ip)).toBe(canonical);
  });
});
