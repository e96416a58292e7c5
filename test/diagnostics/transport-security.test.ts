import { describe, expect, it } from "vitest";
import { headerMapOf } from "../../src/probe/http/header-map.js";
import { altSvcAdvertisesH3, HSTS_MAX_AGE_CAP, hstsOf, parseHsts, transportSecurityOf } from "../../src/diagnostics/transport-security.js";

const policy = (maxAge: number, includeSubDomains = false, preload = false) => ({ maxAge, includeSubDomains, preload });

describe("parseHsts", () => {
  it.each([
    ["max-age=31536000", policy(31_536_000)],
    ["max-age=31536000; includeSubDomains; preload", policy(31_536_000, true, true)],
    ["MAX-AGE=60;INCLUDESUBDOMAINS", policy(60, true)],
    ["  max-age = 60 ;\tpreload  ", policy(60, false, true)],
    ['max-age="86400"', policy(86_400)],
    ['max-age="8\\6400"', policy(86_400)],
    ["max-age=0", policy(0)],
    ["max-age=007", policy(7)],
    ["includeSubDomains; max-age=10", policy(10, true)],
    ["max-age=10;;; ;", policy(10)],
    ['max-age=10; report-uri="https://x.example/r;a"; unknown=tok', policy(10)],
    ["max-age=99999999999999999999999999999999999999", policy(HSTS_MAX_AGE_CAP)],
  ])("%j is a policy", (raw, expected) => {
    expect(parseHsts(raw)).toEqual(expected);
  });

  it.each([
    [""],
    ["includeSubDomains"],
    ["max-age"],
    ["max-age="],
    ["max-age=-1"],
    ["max-age=+5"],
    ["max-age=1.5"],
    ["max-age=1e9"],
    ["max-age=10; max-age=20"],
    ["max-age=10; Max-Age=10"],
    ["max-age=10; preload; PRELOAD"],
    ["max-age=10; includeSubDomains=yes"],
    ["max-age=10, max-age=20"],
    ["max-age=10 junk"],
    ['max-age="10'],
    ['max-age="10\\'],
    ["=10"],
    ["max-age=10; =x"],
    ["max-age=10\u0000"],
    ["max-age\u00e9=10"],
    ["max-age=１０"],
    ["max-age=10; ünknown"],
  ])("%j is invalid", (raw) => {
    expect(parseHsts(raw)).toBeNull();
  });

  it("reads 64 KiB of anything in bounded time, never throwing", () => {
    const inputs = [
      `max-age=${"9".repeat(65_536)}`,
      `max-age=1;${" ".repeat(65_536)}`,
      `max-age="${"\\".repeat(65_536)}`,
      ";".repeat(65_536),
      "a=".repeat(32_768),
      Array.from({ length: 65_536 }, (_, i) => String.fromCharCode((i * 7919) % 256)).join(""),
    ];
    const started = performance.now();
    for (const input of inputs) expect(() => parseHsts(input)).not.toThrow();
    expect(parseHsts(`max-age=${"9".repeat(65_536)}`)).toBeNull();
    // Linear scans capped at 8 KiB: far under this on any machine.
    expect(performance.now() - started).toBeLessThan(200);
  });

  it("a long value under the cap is read whole: the digits clamp, the answer stays an int32", () => {
    expect(parseHsts(`max-age=${"9".repeat(4_000)}`)).toEqual(policy(2_147_483_647));
  });
});

describe("hstsOf: the first field counts (RFC 6797 §8.1)", () => {
  it.each([
    [[], { kind: "missing" }],
    [[["strict-transport-security", "max-age=100"]], { kind: "policy", policy: policy(100) }],
    [[["strict-transport-security", "max-age=100"], ["strict-transport-security", "max-age=5; preload"]], { kind: "policy", policy: policy(100) }],
    [[["strict-transport-security", "max-age=oops"], ["strict-transport-security", "max-age=100"]], { kind: "invalid" }],
  ] as const)("%j", (fields, expected) => {
    expect(hstsOf(headerMapOf(fields))).toEqual(expected);
  });

  it("a field named __proto__ or constructor is just a field", () => {
    expect(hstsOf(headerMapOf([["__proto__", "x"], ["constructor", "y"]]))).toEqual({ kind: "missing" });
  });
});

describe("altSvcAdvertisesH3", () => {
  it.each([
    [undefined, false],
    ["clear", false],
    ['h3=":443"; ma=86400', true],
    ['h2=":443", h3=":443"; ma=2592000', true],
    ['h3-29=":443"', false],
    ['H3=":443"', false],
    ['h2="a,h3=\\":1\\"", quic=":443"', false],
    ['  ,  h3=":8443"', true],
    [["h2=\":443\"", "h3=\":443\""], true],
    ['xh3=":443"', false],
    ["h3", false],
  ] as const)("%j -> %s", (value, expected) => {
    expect(altSvcAdvertisesH3(value)).toBe(expected);
  });

  it("64 KiB of commas and quotes: bounded and fast, never throwing", () => {
    const started = performance.now();
    expect(altSvcAdvertisesH3(",".repeat(65_536))).toBe(false);
    expect(altSvcAdvertisesH3(`"${"\\".repeat(65_536)}`)).toBe(false);
    expect(altSvcAdvertisesH3(`${'h2=":1", '.repeat(8_000)}h3=":443"`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(200);
  });
});

describe("transportSecurityOf", () => {
  it("puts the readings together", () => {
    expect(transportSecurityOf(headerMapOf([["strict-transport-security", "max-age=1; preload"], ["alt-svc", 'h3=":443"']]))).toEqual({
      hsts: policy(1, false, true),
      hstsInvalid: false,
      h3Advertised: true,
    });
    expect(transportSecurityOf(headerMapOf([["strict-transport-security", "nope"]]))).toEqual({ hsts: null, hstsInvalid: true, h3Advertised: false });
  });
});
