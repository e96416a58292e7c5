import { describe, expect, it } from "vitest";
import { interleavedMedians } from "../fixtures/interleaved-medians.js";
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

  // The yardstick: a valid policy as long as the cap lets a value be (unknown directives are skipped), parsed in
  // the same run on the same machine; a backtracking or quadratic reader costs thousands of times it.
  const yardstick = `max-age=31536000${"; x=y".repeat(1_600)}`;

  it.each([
    ["a 64 KiB max-age", `max-age=${"9".repeat(65_536)}`],
    ["64 KiB of spaces", `max-age=1;${" ".repeat(65_536)}`],
    ["an open quote of backslashes", `max-age="${"\\".repeat(65_536)}`],
    ["64 KiB of semicolons", ";".repeat(65_536)],
    ["directives with no value", "a=".repeat(32_768)],
    ["every byte value", Array.from({ length: 65_536 }, (_, i) => String.fromCharCode((i * 7919) % 256)).join("")],
  ])("reads %s in work bounded by the cap, never throwing", (_label, input) => {
    expect(() => parseHsts(input)).not.toThrow();
    const { subject, yardstick: base } = interleavedMedians(
      () => parseHsts(input),
      () => parseHsts(yardstick),
      9,
    );
    expect(subject).toBeLessThan(Math.max(base, 0.05) * 50);
  });

  it("gives no policy for a max-age past the cap", () => {
    expect(parseHsts(`max-age=${"9".repeat(65_536)}`)).toBeNull();
  });

  it("a long value under the cap is read whole: the digits clamp, the answer stays an int32", () => {
    expect(parseHsts(`max-age=${"9".repeat(4_000)}`)).toEqual(policy(2_147_483_647));
  });
});

describe("hstsOf: the first field counts (RFC 6797 §8.1)", () => {
  it.each([
    [[], { kind: "missing" }],
    [[["strict-transport-security", "max-age=100"]], { kind: "policy", policy: policy(100) }],
    [
      [
        ["strict-transport-security", "max-age=100"],
        ["strict-transport-security", "max-age=5; preload"],
      ],
      { kind: "policy", policy: policy(100) },
    ],
    [
      [
        ["strict-transport-security", "max-age=oops"],
        ["strict-transport-security", "max-age=100"],
      ],
      { kind: "invalid" },
    ],
  ] as const)("%j", (fields, expected) => {
    expect(hstsOf(headerMapOf(fields))).toEqual(expected);
  });

  it("a field named __proto__ or constructor is just a field", () => {
    expect(
      hstsOf(
        headerMapOf([
          ["__proto__", "x"],
          ["constructor", "y"],
        ]),
      ),
    ).toEqual({ kind: "missing" });
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
    [['h2=":443"', 'h3=":443"'], true],
    ['xh3=":443"', false],
    ["h3", false],
  ] as const)("%j -> %s", (value, expected) => {
    expect(altSvcAdvertisesH3(value)).toBe(expected);
  });

  it.each([
    ["64 KiB of commas", ",".repeat(65_536)],
    ["an open quote of backslashes", `"${"\\".repeat(65_536)}`],
    ["8,000 alternatives before h3, past the cap", `${'h2=":1", '.repeat(8_000)}h3=":443"`],
  ])("reads %s in work bounded by the cap, never throwing", (_label, input) => {
    expect(altSvcAdvertisesH3(input)).toBe(false);
    const plain = `${'h2=":443"; ma=86400, '.repeat(300)}h3=":443"`;
    const { subject, yardstick: base } = interleavedMedians(
      () => altSvcAdvertisesH3(input),
      () => altSvcAdvertisesH3(plain),
      9,
    );
    expect(subject).toBeLessThan(Math.max(base, 0.05) * 50);
  });
});

describe("transportSecurityOf", () => {
  it("puts the readings together", () => {
    expect(
      transportSecurityOf(
        headerMapOf([
          ["strict-transport-security", "max-age=1; preload"],
          ["alt-svc", 'h3=":443"'],
        ]),
      ),
    ).toEqual({
      hsts: policy(1, false, true),
      hstsInvalid: false,
      h3Advertised: true,
    });
    expect(transportSecurityOf(headerMapOf([["strict-transport-security", "nope"]]))).toEqual({
      hsts: null,
      hstsInvalid: true,
      h3Advertised: false,
    });
  });
});
