import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBatchFile } from "../../src/cli/diagnose/batch-trace.js";
import { parseBatch } from "../../web/src/batch-input.js";
import { traceCommand } from "../../src/cli/trace.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { runDiagnose } from "../fixtures/cli-io.js";

describe("parseBatchFile", () => {
  it("reads url[,expected] rows, a header, comments, blank lines and quoted fields", () => {
    const parsed = parseBatchFile(
      'url,expected\n# old blog\nhttp://a.test/1,https://b.test/1\n\n"http://a.test/x,y","https://b.test/x,y"\r\nhttp://a.test/2\n',
    );
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
    expect(parseBatch("http://a.test/,https://b.test/,,")).toEqual({
      ok: true,
      entries: [{ url: "http://a.test/", expectedFinalUrl: "https://b.test/" }],
    });
  });

  it("reads a batch report's CSV by its header (url, expected_final_url, verdict), as --csv and the page write it", () => {
    const report = [
      "index,url,expected_final_url,verdict,code,reason,final_status,final_url,hops,chain",
      '0,http://a.test/1,https://b.test/1,PASS,,ends at the expected final URL,200,https://b.test/1,2,"301 http://a.test/1 > 200 https://b.test/1"',
      "1,http://a.test/2,,FAIL,final_status_error,the final URL answers 503,503,http://a.test/2,1,503 http://a.test/2",
    ].join("\r\n");
    expect(parseBatchFile(report)).toEqual({
      ok: true,
      rows: [
        { url: "http://a.test/1", expectedFinalUrl: "https://b.test/1", verdict: "PASS", code: "" },
        { url: "http://a.test/2", expectedFinalUrl: undefined, verdict: "FAIL", code: "final_status_error" },
      ],
    });
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
        "/shop": { kind: "respond", status: 503 },
        "/loop": { kind: "redirect", status: 301, location: "/loop" },
      },
    });
    dir = mkdtempSync(join(tmpdir(), "sitediag-batch-"));
  });
  afterAll(async () => {
    await targets?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const base = () => ({
    SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8",
    SITEDIAG_TRACE_PORTS: String(targets.httpPort),
    SITEDIAG_TRACE_HOP_TIMEOUT_MS: "1000",
  });

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
    expect(lines[0]).toMatch(/^#\s+VERDICT\s+FINAL\s+HOPS\s+URL\s+CODE\s+REASON$/);
    expect(lines[1]).toMatch(new RegExp(`^1\\s+PASS\\s+200\\s+2\\s+${targets.url("/old")}\\s+ends at the expected final URL$`));
    expect(lines[2]).toMatch(new RegExp(`^2\\s+PASS\\s+200\\s+1\\s+${targets.url("/new")}$`));
    expect(result.stdout).toMatch(/all pass {2}2 traced: 2 pass, 0 fail; 1 with an expectation, 0 not met; 0 could not be traced/);
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
      .map(
        (line) =>
          JSON.parse(line) as {
            index: number;
            ok: boolean;
            expectation?: { matches: boolean; reason: string | null };
            error?: { code: string };
          },
      );
    expect(items.map((item) => item.index).sort()).toEqual([0, 1, 2, 3]);
    const byIndex = new Map(items.map((item) => [item.index, item]));
    expect(byIndex.get(0)).toMatchObject({ ok: true, expectation: { matches: true, reason: null }, verdict: { verdict: "PASS" } });
    expect(byIndex.get(1)).toMatchObject({ verdict: { verdict: "FAIL", code: "expectation_not_met" } });
    expect(byIndex.get(1)?.expectation?.reason).toMatch(/temporary redirect/);
    expect(byIndex.get(2)?.expectation?.reason).toMatch(/answers 404, not a 2xx/);
    expect(byIndex.get(3)).toMatchObject({ ok: false, error: { code: "invalid_argument" } });
  });

  it("fails a row with no expectation that ends in a 4xx/5xx or a broken chain, by the page's rule: the reason, its code, exit 1", async () => {
    const csv = file(
      "plain.csv",
      [targets.url("/old"), targets.url("/gone"), targets.url("/shop"), targets.url("/loop"), "ftp://127.0.0.1/x"].join("\n"),
    );
    const result = await runDiagnose(traceCommand, ["--batch", csv], base());
    expect(result.code).toBe(1);
    const lines = result.stdout.split("\n");
    expect(lines[1]).toMatch(/^1\s+PASS\s+200\s+2\s/);
    expect(lines[2]).toMatch(/^2\s+FAIL\s+404\s+2\s+\S+\s+final_status_error\s+the final URL answers 404 Not Found$/);
    expect(lines[3]).toMatch(/^3\s+FAIL\s+503\s+1\s+\S+\s+final_status_error\s+the final URL answers 503 Service Unavailable$/);
    expect(lines[4]).toMatch(/^4\s+FAIL\s+-\s+1\s+\S+\s+redirect_loop\s+redirect loop: .+/);
    expect(lines[5]).toMatch(/^5\s+FAIL\s+-\s+-\s+\S+\s+input_scheme\s+not traced: .+/);
    expect(result.stdout).toMatch(/4 to look at {2}5 traced: 1 pass, 4 fail; 0 with an expectation, 0 not met; 1 could not be traced/);
    expect(result.stdout).toMatch(/^failures by code: 2 final_status_error, 1 input_scheme, 1 redirect_loop$/m);
  });

  it("--csv prints the page's CSV: verdict, code, reason, final status, hops and the chain of every row", async () => {
    const csv = file("audit.csv", `${targets.url("/old")},${targets.url("/new")}\n${targets.url("/shop")}\n`);
    const result = await runDiagnose(traceCommand, ["--batch", csv, "--csv"], base());
    expect(result.code).toBe(1);
    expect(result.stdout.split("\r\n")).toEqual([
      "index,url,expected_final_url,max_redirects,verdict,code,reason,final_status,final_url,hops,chain",
      `1,${targets.url("/old")},${targets.url("/new")},,PASS,,ends at the expected final URL,200,${targets.url("/new")},2,301 ${targets.url("/old")} > 200 ${targets.url("/new")}`,
      `2,${targets.url("/shop")},,,FAIL,final_status_error,the final URL answers 503 Service Unavailable,503,${targets.url("/shop")},1,503 ${targets.url("/shop")}`,
      "",
    ]);
    const both = await runDiagnose(traceCommand, ["--batch", csv, "--csv", "--json"], base());
    expect(both.code).toBe(2);
  });

  it("--rerun-failed traces again only the rows of a report that did not pass", async () => {
    const first = await runDiagnose(
      traceCommand,
      ["--batch", file("run1.csv", `${targets.url("/old")},${targets.url("/new")}\n${targets.url("/shop")}\n`), "--csv"],
      base(),
    );
    const report = file("report.csv", first.stdout);
    const seen = () => targets.requests.filter((request) => request.target === "/old").length;
    const before = seen();
    const again = await runDiagnose(traceCommand, ["--batch", report, "--rerun-failed"], base());
    expect(again.code).toBe(1);
    expect(again.stdout.split("\n")[1]).toMatch(new RegExp(`^1\\s+FAIL\\s+503\\s+1\\s+${targets.url("/shop")}\\s+final_status_error`));
    expect(again.stdout).toMatch(/1 to look at {2}1 traced: 0 pass, 1 fail/);
    expect(seen()).toBe(before);

    const allPassed = file("passed.csv", first.stdout.split("\r\n").slice(0, 2).join("\r\n"));
    expect(await runDiagnose(traceCommand, ["--batch", allPassed, "--rerun-failed"], base())).toMatchObject({
      code: 0,
      stderr: expect.stringContaining("every row passed; nothing to re-run"),
    });
    const plain = await runDiagnose(traceCommand, ["--batch", file("plain2.csv", `${targets.url("/old")}\n`), "--rerun-failed"], base());
    expect(plain).toMatchObject({ code: 2, stderr: expect.stringContaining("--rerun-failed reads a batch report") });
  });

  it("refuses a file it cannot use with exit 2, tracing nothing", async () => {
    const seen = targets.requests.length;
    for (const argv of [
      ["--batch", join(dir, "missing.csv")],
      ["--batch", file("bad.csv", "a,b,c\n")],
      ["--batch"],
      ["--batch", file("x.csv", "http://a.test/"), "extra"],
    ]) {
      const result = await runDiagnose(traceCommand, argv, base());
      expect(result.code, argv.join(" ")).toBe(2);
    }
    expect(targets.requests.length).toBe(seen);
  });
});
