import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, type ReceivedRequest, type TargetRoute, startHttpTargets } from "../fixtures/http-targets.js";
import { CRAWLER_USER_AGENTS } from "../../src/shared/user-agents.js";
import { sitediagArgs } from "../fixtures/built-sitediag.js";

// `sitediag check|trace` as a person runs them (a child process through
// src/main.ts): what the final page tells search engines, and --user-agent (issue 39).

const page = (head: string, headers: Record<string, string> = {}): TargetRoute => ({
  kind: "respond",
  status: 200,
  headers: { "content-type": "text/html", ...headers },
  body: `<html><head>${head}</head><body><h1>Widgets</h1></body></html>`,
});

let targets: HttpTargets;
let dir: string;

beforeAll(async () => {
  targets = await startHttpTargets({
    routes: {
      "/old": { kind: "redirect", status: 301, location: "/noindex" },
      "/noindex": page("<title>New</title>", { "x-robots-tag": "noindex" }),
      "/canonical": page('<title>New</title><link rel=canonical href="/real">'),
      "/clean": page("<title>Widgets</title>"),
      "/deep/page": { kind: "redirect", status: 301, location: "/" },
      "/": page("<title>Home</title>"),
      "/by-agent": (request: ReceivedRequest) =>
        String(request.headers["user-agent"] ?? "").includes("Googlebot")
          ? { kind: "redirect", status: 301, location: "/for-bots" }
          : page("<title>People</title>"),
      "/for-bots": page("<title>Bots</title>"),
    },
  });
  dir = mkdtempSync(join(tmpdir(), "sitediag-search-cli-"));
});

afterAll(async () => {
  await targets?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** The CLI in a process of its own, loopback opened to probing as the tests' service is. */
function sitediag(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      sitediagArgs(...args),
      {
        cwd: join(import.meta.dirname, "../.."),
        env: { PATH: process.env.PATH, NO_COLOR: "1", SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8", SITEDIAG_TRACE_PORTS: String(targets.httpPort) },
        timeout: 60_000,
      },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }),
    );
  });
}

describe("sitediag check and trace", () => {
  it("trace reports the noindex of the final page among its warnings", async () => {
    const { code, stdout } = await sitediag(["trace", targets.url("/old")]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/warning\s+hop 2\s+noindex\s+.*noindex in X-Robots-Tag/);
  });

  it("check reports a canonical elsewhere and --json --details carries details.search", async () => {
    const { stdout } = await sitediag(["check", targets.url("/canonical")]);
    expect(stdout).toMatch(/canonical_elsewhere\s+.*names http:\/\/127\.0\.0\.1:\d+\/real as its canonical URL/);
    const json = await sitediag(["check", "--json", "--details", targets.url("/canonical")]);
    expect((JSON.parse(json.stdout) as { details: { search: unknown } }).details.search).toEqual({
      noindex: null,
      canonical: { url: targets.url("/real"), source: "link_element", elsewhere: true },
      redirectToHome: false,
      soft404: null,
      bodyRead: true,
    });
  });

  it("a clean page: none of the new warnings", async () => {
    const { code, stdout } = await sitediag(["trace", targets.url("/clean")]);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(/noindex|canonical_elsewhere|redirect_to_home|soft_404_suspected/);
  });

  it("--user-agent googlebot follows the redirect a site keeps for Googlebot; an unknown one is refused", async () => {
    const asGoogle = await sitediag(["trace", "--json", "--user-agent", "googlebot", targets.url("/by-agent")]);
    expect((JSON.parse(asGoogle.stdout) as { finalUrl: string }).finalUrl).toBe(targets.url("/for-bots"));
    const asBrowser = await sitediag(["trace", "--json", targets.url("/by-agent")]);
    expect((JSON.parse(asBrowser.stdout) as { finalUrl: string }).finalUrl).toBe(targets.url("/by-agent"));
    const report = await sitediag(["check", "--user-agent", "googlebot", targets.url("/by-agent")]);
    expect(report.stdout).toContain(`requested as googlebot (User-Agent: ${CRAWLER_USER_AGENTS.googlebot})`);
    expect(report.stdout).toContain(targets.url("/for-bots"));
    const unknown = await sitediag(["check", "--user-agent", "yandex", targets.url("/clean")]);
    expect(unknown.code).toBe(2);
    // One line of the command line's own form (issue 39's audit), then where the options are.
    expect(unknown.stderr).toMatch(/^sitediag check: --user-agent "yandex": must be browser, googlebot or bingbot\n/);
  });

  it("trace --batch fails the noindex and home rows, passes the canonical one with its word, for every row as Googlebot", async () => {
    const file = join(dir, "rows.csv");
    writeFileSync(file, [targets.url("/old"), targets.url("/deep/page"), targets.url("/canonical"), targets.url("/by-agent")].join("\n"));
    const { code, stdout } = await sitediag(["trace", "--batch", file, "--csv", "--user-agent", "googlebot"]);
    expect(code).toBe(1);
    const rows = stdout.trim().split("\r\n").slice(1);
    expect(rows[0]).toMatch(/,FAIL,noindex,/);
    expect(rows[1]).toMatch(/,FAIL,redirect_to_home,/);
    expect(rows[2]).toMatch(/,PASS,,.*as its canonical URL/);
    expect(rows[3]).toContain(`,PASS,,,200,${targets.url("/for-bots")},2,`);
  });
});
