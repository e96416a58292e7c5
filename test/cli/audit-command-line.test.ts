/**
 * Issue 39, an audit from the command line, as a person runs it: `sitediag`
 * as its own process against loopback targets and a loopback DNS server.
 * Mistakes on the command line get one short line (and the option meant);
 * `--help` names the batch and the vantages; an input with `://` that is no
 * URL is refused with nothing looked up; a batch holds chains to a length,
 * counts its failures by code, names refusals by their input_* code, and a
 * re-run leaves out the rows that cannot trace as written.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { sitediagArgs } from "../fixtures/built-sitediag.js";

let dir: string;
let targets: HttpTargets;
let dns: DnsServer;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sitediag-audit-"));
  targets = await startHttpTargets({
    routes: {
      "/r3": { kind: "redirect", status: 301, location: "/r2" },
      "/r2": { kind: "redirect", status: 301, location: "/r1" },
      "/r1": { kind: "redirect", status: 301, location: "/new" },
      "/old": { kind: "redirect", status: 301, location: "/new" },
      "/new": { kind: "respond", status: 200 },
      "/shop": { kind: "respond", status: 503 },
    },
  });
  dns = await startDnsServer();
  writeFileSync(join(dir, "hosts"), "");
  env = {
    PATH: process.env.PATH ?? "",
    SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8",
    SITEDIAG_TRACE_PORTS: String(targets.httpPort),
    SITEDIAG_DNS_SERVERS: dns.server,
    SITEDIAG_HOSTS_FILE: join(dir, "hosts"),
    SITEDIAG_STORE: `sqlite:${join(dir, "keys.db")}`,
    NO_COLOR: "1",
  };
});

afterAll(async () => {
  await targets?.close();
  await dns?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function sitediag(...argv: string[]): Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }> {
  const child = spawn(process.execPath, sitediagArgs(...argv), { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe("the command line says a mistake in one line", () => {
  it.each([
    [["check", "--jsn", "http://127.0.0.1/"], 'sitediag check: unknown option "--jsn" (did you mean --json?)'],
    [
      ["trace", "--batch", "rows.csv", "--json", "--csv"],
      "sitediag trace: --json and --csv are two ways to print the same rows: choose one",
    ],
    [
      ["trace", "--batch", "rows.csv", "--max-redirect", "2"],
      'sitediag trace: unknown option "--max-redirect" (did you mean --max-redirects?)',
    ],
    [
      ["trace", "--batch", "rows.csv", "--max-redirects", "99"],
      'sitediag trace: --max-redirects takes a whole number from 0 to 20, not "99"',
    ],
    [["trace", "--csv", "http://127.0.0.1/"], "sitediag trace: --csv goes with sitediag trace --batch FILE"],
    [["check", "--json"], "sitediag check: a URL is required"],
    [["chekc", "http://127.0.0.1/"], 'sitediag: unknown command "chekc" (did you mean check?)'],
  ])("%j", async (argv, line) => {
    const result = await sitediag(...argv);
    expect(result.code).toBe(2);
    const lines = result.stderr.trimEnd().split("\n");
    expect(lines[0]).toBe(line);
    // The line and where the options are, never Node's parseArgs wording nor the whole help.
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^Run "sitediag( \w+)? --help" for every (option|command)\.$/);
    expect(result.stderr).not.toMatch(/ERR_PARSE_ARGS|usage:|Unknown option '/);
    expect(result.stdout).toBe("");
  });

  it("sitediag --help lists the batch and the vantages", async () => {
    const result = await sitediag("--help");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("sitediag trace --batch FILE");
    expect(result.stdout).toContain("--vantages all");
    expect(result.stdout).toMatch(/^ {2}trace {2}/m);
  });
});

describe("an input that holds :// but is no URL", () => {
  it("is refused as no URL, by check, trace and a batch row, and nothing is looked up", async () => {
    const before = dns.queries.length;
    for (const command of ["check", "trace"]) {
      const result = await sitediag(command, "ht!tp://bad url");
      expect(result.code, command).toBe(2);
      expect(result.stderr, command).toMatch(/^refused \(invalid_url\): The URL could not be parsed\ncode input_invalid_url\n/);
    }
    const batch = await sitediag("trace", "--batch", file("bad.csv", "ht!tp://bad url\n"), "--csv");
    expect(batch.stdout).toContain(",FAIL,input_invalid_url,not traced: The URL could not be parsed,");
    expect(dns.queries.length).toBe(before);
  });
});

describe("a migration audit's batch", () => {
  it("holds chains to --max-redirects and to a row's max_redirects, names refusals by code, counts failures by code, and a re-run leaves out refused rows unless asked", async () => {
    const rows = [
      "url,expected_final_url,max_redirects",
      `${targets.url("/r3")},${targets.url("/new")},`,
      `${targets.url("/r3")},${targets.url("/new")},3`,
      `${targets.url("/old")},${targets.url("/new")},`,
      `${targets.url("/shop")},,`,
      `http://10.0.0.1:${targets.httpPort}/old,,`,
      "not a url,,",
    ];
    const table = await sitediag("trace", "--batch", file("audit.csv", rows.join("\n")), "--max-redirects", "2");
    expect(table.code).toBe(1);
    const lines = table.stdout.split("\n");
    expect(lines[1]).toMatch(/^1\s+FAIL\s+200\s+4\s+\S+\s+chain_too_long\s+3 redirects, more than the 2 allowed$/);
    expect(lines[2]).toMatch(/^2\s+PASS\s+200\s+4\s/);
    expect(lines[3]).toMatch(/^3\s+PASS\s+200\s+2\s/);
    expect(lines[4]).toMatch(/^4\s+FAIL\s+503\s/);
    expect(lines[5]).toMatch(/^5\s+FAIL\s+-\s+-\s+\S+\s+input_non_public_address\s+not traced: /);
    expect(lines[6]).toMatch(/^6\s+FAIL\s+-\s+-\s+.+\s+input_invalid_url\s+not traced: /);
    expect(table.stdout).toMatch(
      /^failures by code: 1 chain_too_long, 1 final_status_error, 1 input_invalid_url, 1 input_non_public_address$/m,
    );

    const csv = await sitediag("trace", "--batch", join(dir, "audit.csv"), "--max-redirects", "2", "--csv");
    const report = csv.stdout.split("\r\n");
    expect(report[0]).toBe("index,url,expected_final_url,max_redirects,verdict,code,reason,final_status,final_url,hops,chain");
    // index counts from 1, as the table's #; the limit each row was held to is its own.
    expect(report[1]).toMatch(/^1,\S+,\S+,2,FAIL,chain_too_long,/);
    expect(report[2]).toMatch(/^2,\S+,\S+,3,PASS,/);
    expect(report[6]).toMatch(/^6,not a url,,2,FAIL,input_invalid_url,/);
    writeFileSync(join(dir, "report.csv"), csv.stdout);

    const shopBefore = targets.requests.filter((request) => request.target === "/shop").length;
    const again = await sitediag("trace", "--batch", join(dir, "report.csv"), "--rerun-failed");
    expect(again.stderr).toContain(
      "re-running 2 rows; 2 rows refused at input skipped (they cannot trace as written; --include-refused runs them too)",
    );
    // Row 1 keeps the limit it was written with: it fails again as too long; row 4 fails again at 503.
    expect(again.stdout).toMatch(/^1\s+FAIL\s+200\s+4\s+\S+\s+chain_too_long/m);
    expect(again.stdout).toMatch(/2 traced: 0 pass, 2 fail/);
    expect(targets.requests.filter((request) => request.target === "/shop").length).toBeGreaterThan(shopBefore);

    const all = await sitediag("trace", "--batch", join(dir, "report.csv"), "--rerun-failed", "--include-refused");
    expect(all.stdout).toMatch(/4 traced: 0 pass, 4 fail/);
    expect(readFileSync(join(dir, "report.csv"), "utf8")).toBe(csv.stdout);
  });
});
