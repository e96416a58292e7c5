import { describe, expect, it } from "vitest";
import { isVantageName, readVantageList } from "../../src/shared/vantage-list.js";

describe("the vantages a caller names", () => {
  it("none is the plain call", () => {
    expect(readVantageList([])).toEqual({ kind: "none" });
  });

  it("reads names from commas and from elements alike, deduplicated and sorted, blanks around a name dropped", () => {
    expect(readVantageList(["us-east,eu-west"])).toEqual({ kind: "names", names: ["eu-west", "us-east"] });
    expect(readVantageList(["us-east", " eu-west ", "us-east"])).toEqual({ kind: "names", names: ["eu-west", "us-east"] });
  });

  it("all stands alone", () => {
    expect(readVantageList(["all"])).toEqual({ kind: "all" });
    expect(readVantageList(["all", "all"])).toEqual({ kind: "all" });
    expect(readVantageList(["all,local"])).toMatchObject({ kind: "problem", problem: { code: "input_vantages_syntax" } });
  });

  it.each(["", "a,", ",a", "EU", "eu_west", "-eu", "eu-", "é", "a".repeat(33), "eu west", "a\u0000b"])(
    "%j is not a list of names",
    (text) => {
      expect(readVantageList([text])).toMatchObject({ kind: "problem", problem: { code: "input_vantages_syntax" } });
    },
  );

  it("at most 16 names, a repeat counted, and a huge element refused before it is split", () => {
    const names = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
    expect(readVantageList([names(16).join(",")])).toMatchObject({ kind: "names" });
    expect(readVantageList([names(17).join(",")])).toMatchObject({ kind: "problem", problem: { code: "input_vantages_too_many" } });
    expect(readVantageList(Array.from({ length: 17 }, () => "eu"))).toMatchObject({
      kind: "problem",
      problem: { code: "input_vantages_too_many" },
    });
    expect(readVantageList([",".repeat(1_000_000)])).toMatchObject({ kind: "problem", problem: { code: "input_vantages_too_many" } });
  });

  it("a name: lower-case letters, digits and '-' inside, up to 32 characters, never all", () => {
    expect(isVantageName("eu-west-1")).toBe(true);
    expect(isVantageName("a".repeat(32))).toBe(true);
    expect(isVantageName("a".repeat(33))).toBe(false);
    expect(isVantageName("all")).toBe(false);
    expect(isVantageName("7")).toBe(true);
  });
});
