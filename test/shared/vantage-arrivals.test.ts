import { describe, expect, it } from "vitest";
import { stillOut, verdictSoFar, waitedWords } from "../../src/shared/vantage-arrivals.js";
import { verdictTone } from "../../src/shared/vantage-verdict.js";

const ASKED = [{ name: "ap-south" }, { name: "eu-west", label: "EU West" }, { name: "us-east" }];

describe("stillOut", () => {
  it("the vantages asked without an entry, in the order asked", () => {
    expect(stillOut(ASKED, [])).toEqual(ASKED);
    expect(stillOut(ASKED, ["us-east", "ap-south"])).toEqual([{ name: "eu-west", label: "EU West" }]);
    expect(stillOut(ASKED, ["ap-south", "eu-west", "us-east"])).toEqual([]);
  });

  it("an entry of a vantage not announced changes nothing of the others", () => {
    expect(stillOut(ASKED, ["nowhere"]).map((vantage) => vantage.name)).toEqual(["ap-south", "eu-west", "us-east"]);
  });
});

describe("verdictSoFar", () => {
  it("waiting while nothing that arrived spoke of the target", () => {
    expect(verdictSoFar([], 3)).toBe("waiting");
    expect(verdictSoFar([undefined], 2)).toBe("waiting");
  });

  it("never everywhere, never the good tone, while a vantage is out", () => {
    for (const readings of [["up"], ["up", "up"], ["down", "down"], ["blocked", "blocked"]] as const) {
      const soFar = verdictSoFar(readings, 1);
      expect(soFar).not.toMatch(/everywhere/);
      if (soFar !== "waiting") expect(verdictTone(soFar)).not.toBe("good");
    }
    expect(verdictSoFar(["up", "up"], 1)).toBe("up_where_answered");
    expect(verdictSoFar(["down"], 2)).toBe("down_where_answered");
  });

  it("in some is already true with a vantage out: what arrived says so", () => {
    expect(verdictSoFar(["up", "down"], 1)).toBe("down_in_some");
    expect(verdictSoFar(["up", "blocked"], 1)).toBe("blocked_in_some");
  });

  it("with none out it is the rule's own verdict", () => {
    expect(verdictSoFar(["up", "up", "up"], 0)).toBe("up_everywhere");
    expect(verdictSoFar([undefined, undefined], 0)).toBe("unavailable");
  });
});

describe("waitedWords", () => {
  it("whole seconds waited, rounded down, of the deadline rounded up", () => {
    expect(waitedWords(12_900, 32_000)).toBe("12 s of 32 s");
    expect(waitedWords(0, 16_500)).toBe("0 s of 17 s");
    expect(waitedWords(-5, 0)).toBe("0 s of 0 s");
  });
});
