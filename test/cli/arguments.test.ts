import { describe, expect, it } from "vitest";
import { closest, readArguments } from "../../src/cli/arguments.js";

// The command line of check and trace, read before anything runs: each mistake one short sentence.
const OPTIONS = {
  json: { type: "boolean" },
  csv: { type: "boolean" },
  batch: { type: "string" },
  "max-redirects": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

describe("readArguments", () => {
  it("reads good lines as parseArgs does: - as a value, --name=value, -- ending the options", () => {
    expect(readArguments(["--batch", "-", "--json"], OPTIONS, false)).toMatchObject({ ok: true, values: { batch: "-", json: true } });
    expect(readArguments(["--max-redirects=3", "-h"], OPTIONS, false)).toMatchObject({
      ok: true,
      values: { "max-redirects": "3", help: true },
    });
    expect(readArguments(["--json", "--", "--not-an-option"], OPTIONS, true)).toMatchObject({ ok: true, positionals: ["--not-an-option"] });
  });

  it.each([
    [["--jsn"], 'unknown option "--jsn" (did you mean --json?)'],
    [["--JSON"], 'unknown option "--JSON" (did you mean --json?)'],
    [["--verbose"], 'unknown option "--verbose"'],
    [["-x"], 'unknown option "-x"'],
    [["--json=yes"], "--json takes no value"],
    [["--batch"], "--batch needs a value"],
    [["--batch", "--json"], "--batch needs a value"],
    [["--max-redirects", "-1"], '--max-redirects needs a value (one that starts with "-" is written --max-redirects=-1)'],
    [["file.csv"], 'unexpected argument "file.csv"'],
    [["--headers"], "--headers goes with a single trace"],
  ])("%j: %s", (argv, problem) => {
    expect(readArguments(argv, OPTIONS, false, { headers: "goes with a single trace" })).toEqual({ ok: false, problem });
  });

  it("names an unknown option of any length in at most 40 characters, and judges it in time linear in the line", () => {
    const long = `--${"j".repeat(100_000)}`;
    const read = readArguments([long], OPTIONS, false);
    expect(read).toEqual({ ok: false, problem: `unknown option "${long.slice(0, 40)}..."` });
  });
});

describe("closest", () => {
  it("finds a typo's option, and nothing for a word too far from every option", () => {
    expect(closest("jsn", ["json", "csv"])).toBe("json");
    expect(closest("max-redirect", ["max-redirects", "batch"])).toBe("max-redirects");
    expect(closest("cvs", ["json", "csv"])).toBe("csv");
    expect(closest("x", ["json", "csv"])).toBeUndefined();
    expect(closest("verbose", ["json", "csv", "details"])).toBeUndefined();
  });
});
