import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBatchFile } from "../../src/cli/diagnose/batch-trace.js";
import { parseBatch } from "../../web/src/batch-input.js";
import { traceCommand } from "../../src/cli/trace.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { runDiagnose } from "./cli-io.js";

describe("parseBatchFile", () => {
  it("reads url[,expected] rows, a header, comments, blank lines and quoted fields", () => {
    const parsed = parseBatchFile('url,expected\n# old blog\nhttp://a.test/1,https://b.test/1\n\n"http://a.test/x,y","https://b.test/x,y"\r\nhttp://a.test/2\n');
    expect(parsed).toEqual({
      ok: true,
      rows: [
        { url: "http://a.test/1", expectedFinalUrl: "https://b.test/1" },
        { url: "http://a.test/x,y", expectedFinalUrl: "https://b.test/x,y" },
        { url: "http://a.test/2" },
      ],
    });
  });

  it("ignores a spreadsheet's empty trailing fields, as the page's batch does (one reader for both)", () => {
    expect(parseBatchFile("http://a.test/,https://b.test/,,\nhttp://a.test/2,,\n")).toEqual({
      ok: true,
      rows: [{ url: "http://a.test/", expectedFinalUrl: "https://b.test/" }, { url: "http://a.test/2" }],
    });
    expect(parseBatch("http://a.test/,https://b.test/,,")).toEqual({ ok: true, entries: [{ url: "http://a.test/", expectedFinalUrl: "https://b.test/" }] });
  });

  it.each([
    ["", /no rows/],
    [`${"http://a.test/\n".repeat(10_001)}`, /more than 10000 rows/],
    ["a,b,c\n", /line 1: expected url\[,expected\], found 3 fields/],
    ['"http://a.test/\n', /line 1: a quoted field is not closed/],
    ["http://a.test/\n,https://b.test/\n", /line 2: the url is empty/],
  ])("refuses %j", (text, problem) => {
    const parsed = parseBatchFile(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toMatch(problem);
  });
});

describe("sitediag trace --batch", () => {
  let targets: HttpTargets;
  let dir: string;
  beforeAll(async () => {
    targets = await startHttpTargets({
      routes: {
        "/old": { kind: "redirect", status: 301, location: "/new" },
        "/temp": { kind: "redirect", status: 302, location: "/new" },
        "/gone": { kind: "redirect", status: 301, location: "/missing" },
        "/missing": { kind: "respond", status: 404 },
        "/new": { kind: "respond", status: 200 },
      },
    });
    dir = mkdtempSync(join(tmpdir(), "sitediag-batch-"));
  });
  afterAll(async () => {
    await targets?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const base = () => ({ SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8", SITEDIAG_TRACE_PORTS: String(targets.httpPort), SITEDIAG_TRACE_HOP_TIMEOUT_MS: "1000" });

  function file(name: string, text: string): string {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  }

  it("prints a table of every row in file order and exits 0 when every expectation is met", async () => {
    const csv = file("ok.csv", `url,expected\n${targets.url("/old")},${targets.url("/new")}\n${targets.url("/new")}\n`);
    const result = await runDiagnose(traceCommand, ["--batch", csv], base());
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toMatch(/^#\s+RESULT\s+FINAL\s+EXPECTATION\s+URL$/);
    expect(lines[1]).toMatch(new RegExp(`^1\\s+redirects detected\\s+200 ${targets.url("/new")}\\s+met\\s+${targets.url("/old")}$`));
    expect(lines[2]).toMatch(/^2\s+healthy\s+200 .*\s+-\s+/);
    expect(result.stdout).toMatch(/all as expected {2}2 traced, 1 with an expectation: 1 met, 0 not met; 0 could not be traced/);
  });

  it("exits 1 and says why when an expectation fails; --json streams one NDJSON line per row; - reads standard input", async () => {
    const csv = [
      `${targets.url("/old")},${targets.url("/new")}`,
      `${targets.url("/temp")},${targets.url("/new")}`,
      `${targets.url("/gone")},${targets.url("/missing")}`,
      "not a url",
    ].join("\n");
    const result = await runDiagnose(traceCommand, ["--batch", "-", "--json"], base(), { stdin: csv });
    expect(result.code).toBe(1);
    const items = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { index: number; ok: boolean; expectation?: { matches: boolean; reason: string | null }; error?: { code: string } });
    expect(items.map((item) => item.index).sort()).toEqual([0, 1, 2, 3]);
    const byIndex = new Map(items.map((item) => [item.index, item]));
    expect(byIndex.get(0)).toMatchObject({ ok: true, expectation: { matches: true, reason: null } });
    expect(byIndex.get(1)?.expectation?.reason).toMatch(/temporary redirect/);
    expect(byIndex.get(2)?.expectation?.reason).toMatch(/answers 404, not a 2xx/);
    expect(byIndex.get(3)).toMatchObject({ ok: false, error: { code: "invalid_argument" } });
  });

  it("refuses a file it cannot use with exit 2, tracing nothing", async () => {
    const seen = targets.requests.length;
    for (const argv of [["--batch", join(dir, "missing.csv")], ["--batch", file("bad.csv", "a,b,c\n")], ["--batch"], ["--batch", file("x.csv", "http://a.test/"), "extra"]]) {
      const result = await runDiagnose(traceCommand, argv, base());
      expect(result.code, argv.join(" ")).toBe(2);
    }
    expect(targets.requests.length).toBe(seen);
  });
});
