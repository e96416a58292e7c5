import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { traceCommand } from "../../src/cli/trace.js";
import { closedLoopbackPort } from "../fixtures/http-targets.js";
import { withoutClock } from "../fixtures/clock-free.js";
import { startTestService } from "../fixtures/service-harness.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { routeChain, startTraceTarget, type TraceTarget } from "../fixtures/trace-targets.js";
import { type DiagnoseRunOptions, escapeRegExp, runDiagnose, stopOnceRequested } from "../fixtures/cli-io.js";

const LOOPBACK = "127.0.0.0/8,::1/128";
const ANSI = "\u001b[";
const MS = String.raw`\d+(\.\d)? ms`;

describe("sitediag trace", () => {
  let target: TraceTarget;
  let secure: TraceTarget;
  let closedPort: number;
  let dir: string;
  let caFile: string;

  /** Runs `sitediag trace` in-process with captured output, allowed to visit the fixtures' ports. */
  function trace(argv: readonly string[], options?: DiagnoseRunOptions) {
    const base = {
      SITEDIAG_ALLOW_CIDRS: LOOPBACK,
      SITEDIAG_TRACE_PORTS: `${target.port},${secure.port},${closedPort}`,
      SITEDIAG_CA_FILE: caFile,
      // Room for a TLS handshake on a busy machine; the test of a timeout sets its own short one.
      SITEDIAG_TRACE_HOP_TIMEOUT_MS: "5000",
      SITEDIAG_TRACE_TOTAL_TIMEOUT_MS: "10000",
    };
    return runDiagnose(traceCommand, argv, base, options);
  }

  beforeAll(async () => {
    const pki = await getTestPki();
    dir = mkdtempSync(join(tmpdir(), "sitediag-cli-"));
    caFile = join(dir, "ca.pem");
    writeFileSync(caFile, pki.caPem);
    target = await startTraceTarget();
    secure = await startTraceTarget({ tls: pki.valid });
    closedPort = await closedLoopbackPort();
    routeChain(target, 2, "/end");
    target.route("/end", { kind: "status", status: 200 });
    target.route("/loop/a", { kind: "redirect", status: 302, location: "/loop/b" });
    target.route("/loop/b", { kind: "redirect", status: 302, location: "/loop/a" });
    target.route("/to-closed", { kind: "redirect", status: 301, location: `http://127.0.0.1:${closedPort}/` });
    target.route("/to-private", { kind: "redirect", status: 301, location: "http://10.0.0.1/" });
    target.route("/silent", { kind: "silent" });
    target.route("/head-405", { kind: "head-status", headStatus: 405, then: { kind: "status", status: 200 } });
    target.route("/upgrade", { kind: "redirect", status: 301, location: secure.url("/") });
    secure.route("/", { kind: "status", status: 200 });
    secure.route("/downgrade", { kind: "redirect", status: 301, location: target.url("/end") });
    target.route("/gone", { kind: "status", status: 404 });
    target.route("/temporary", { kind: "redirect", status: 302, location: "/end" });
    secure.route("/a", { kind: "redirect", status: 301, location: "/b" });
    secure.route("/b", { kind: "redirect", status: 302, location: "/c" });
    secure.route("/c", { kind: "status", status: 200 });
  });
  afterAll(async () => {
    await target?.close();
    await secure?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints the chain hop by hop with arrows, methods and phase timings; Redirects detected exits 0", async () => {
    const { code, stdout, stderr } = await trace([target.url("/r/1")]);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    expect(stdout.split("\n")[0]).toBe(`Redirects detected  ${target.url("/r/1")}`);
    expect(stdout).toMatch(new RegExp(`^ {2}final URL +${escapeRegExp(target.url("/end"))} \\(200\\)$`, "m"));
    expect(stdout).toMatch(/^ {2}redirects +2$/m);
    expect(stdout).toMatch(/^ {2}total time +\d+\.\d ms$/m);
    expect(stdout).toMatch(/^ {2}hop +status +method +address +dns +connect +tls +waiting +receiving +other +total +url$/m);
    // The redirects stay on the origin of a keep-alive server: hops after the first ride the first's connection.
    const row = (hop: number, status: string, connect: string, from: string, to?: string) =>
      new RegExp(
        `^ {2}${hop} +${status} +HEAD +127\\.0\\.0\\.1 +- +${connect} +- +${MS} +${MS} +${MS} +${MS} +${escapeRegExp(target.url(from))}${to === undefined ? "" : ` → ${escapeRegExp(target.url(to))}`}$`,
        "m",
      );
    expect(stdout).toMatch(row(1, "301 Moved Permanently", MS, "/r/1", "/r/2"));
    expect(stdout).toMatch(row(2, "301 Moved Permanently", "reused", "/r/2", "/end"));
    expect(stdout).toMatch(row(3, "200 OK", "reused", "/end"));
    expect(stdout).not.toContain("reason");
    expect(stdout).not.toContain("warnings");
    expect(stdout).not.toContain(ANSI);
  });

  it("a single answer is Healthy and exits 0", async () => {
    const { code, stdout } = await trace([target.url("/end")]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Healthy {2}/);
    expect(stdout).toMatch(/^ {2}redirects +0$/m);
  });

  it("shows the GET that answered after HEAD was refused, and the warning saying so", async () => {
    const { code, stdout } = await trace([target.url("/head-405")]);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^ {2}1 +200 OK +GET +127\\.0\\.0\\.1 .+ ${escapeRegExp(target.url("/head-405"))}$`, "m"));
    // The HEAD was made and waited for: a row of its own above the GET's, so the rows add up to the total time.
    expect(stdout).toMatch(
      new RegExp(
        `^ {2}1 +405 Method Not Allowed +HEAD +127\\.0\\.0\\.1 .+ ${escapeRegExp(target.url("/head-405"))} \\(then GET, below\\)$`,
        "m",
      ),
    );
    // Columns are left-aligned: a total shorter than the other row's is followed by more spaces.
    const totals = [...stdout.matchAll(/ (\d+\.\d) ms +http/g)].map((match) => Math.round(Number.parseFloat(match[1] ?? "0") * 10));
    expect(totals).toHaveLength(2);
    expect(stdout).toContain(`  total time  ${(((totals[0] ?? 0) + (totals[1] ?? 0)) / 10).toFixed(1)} ms\n`);
    expect(stdout).toMatch(
      /^warnings\n {2}info +hop 1 +head_refused_get_used +HEAD answered 405 Method Not Allowed; the hop was retried with GET$/m,
    );
  });

  it("an https -> http downgrade is a problem: counted beside the chain status, listed as a problem, exit 1", async () => {
    const { code, stdout } = await trace([secure.url("/downgrade")]);
    expect(code).toBe(1);
    expect(stdout.split("\n")[0]).toBe(`Redirects detected, 1 problem  ${secure.url("/downgrade")}`);
    expect(stdout).toMatch(
      new RegExp(
        `^ {2}problem +hop 1 +https_downgrade +Hop 1 redirects from HTTPS to plain HTTP: ${escapeRegExp(target.url("/end"))}$`,
        "m",
      ),
    );
  });

  it("a final 4xx is a problem too: exit 1, while a temporary redirect alone is a warning that exits 0", async () => {
    const gone = await trace([target.url("/gone")]);
    expect(gone.code).toBe(1);
    expect(gone.stdout.split("\n")[0]).toBe(`Healthy, 1 problem  ${target.url("/gone")}`);
    expect(gone.stdout).toMatch(/^ {2}problem +hop 1 +final_status_error +The final response is 404 Not Found$/m);
    const temporary = await trace([target.url("/temporary")]);
    expect(temporary.code).toBe(0);
    expect(temporary.stdout.split("\n")[0]).toBe(`Redirects detected  ${target.url("/temporary")}`);
    expect(temporary.stdout).toMatch(/^ {2}warning +hop 1 +temporary_redirect +/m);
  });

  it("a redirect loop exits 1, with the reason the chain stopped", async () => {
    const { code, stdout } = await trace([target.url("/loop/a")]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^Redirect loop {2}/);
    expect(stdout).toMatch(
      new RegExp(`^ {2}reason +Hop 2 redirects back to ${escapeRegExp(target.url("/loop/a"))}, already in the chain$`, "m"),
    );
    expect(stdout).toMatch(/^ {2}final URL +\S+ \(no final response\)$/m);
    expect(stdout).toMatch(/hop 2 +redirect_loop +/);
  });

  it("a failed request exits 1 and gets its own row after the chain", async () => {
    const { code, stdout } = await trace([target.url("/to-closed")]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^Request failed {2}/);
    expect(stdout).toMatch(/^ {2}reason +HEAD http:\/\/127\.0\.0\.1:\d+\/ failed at the connect stage: Connection refused$/m);
    expect(stdout).toMatch(new RegExp(`^ {2}1 +301 Moved Permanently +HEAD .+ → http://127\\.0\\.0\\.1:${closedPort}/$`, "m"));
    expect(stdout).toMatch(
      new RegExp(
        `^ {2}2 +failed at connect: connecting failed after ${MS} \\(ECONNREFUSED\\) +HEAD +127\\.0\\.0\\.1 +- +${MS} +- +- +- +${MS} +${MS} +http://127\\.0\\.0\\.1:${closedPort}/$`,
        "m",
      ),
    );
  });

  it("a redirect to a refused target is shown as not sent, and exits 1", async () => {
    const { code, stdout } = await trace([target.url("/to-private")]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^ {2}2 +not sent: (port|non_public_address) +HEAD +- +- +- +- +- +- +- +- +http:\/\/10\.0\.0\.1\/$/m);
    expect(stdout).toMatch(/hop 1 +redirect_target_refused +/);
  });

  it("a request that never answers is a Timeout, exit 1", async () => {
    const { code, stdout } = await trace([target.url("/silent")], {
      env: { SITEDIAG_TRACE_HOP_TIMEOUT_MS: "300", SITEDIAG_TRACE_TOTAL_TIMEOUT_MS: "2000" },
    });
    expect(code).toBe(1);
    expect(stdout).toMatch(/^Timeout {2}/);
    // How far it got, in words: connected, then nothing; the waiting phase holds the time until the timeout.
    const ms = String.raw`(\d+\.\d) ms`;
    const row = new RegExp(
      `^ {2}1 +timed out at http: connected in ${ms}, then no response in ${ms} \\(RESPONSE_HEAD_TIMEOUT\\) +HEAD +127\\.0\\.0\\.1 +- +${ms} +- +${ms} +- +${ms} +${ms} `,
      "m",
    ).exec(stdout);
    expect(row).not.toBeNull();
    const [, connected, waited, connect, waiting, other, total] = (row ?? []).map((cell) => Number.parseFloat(cell ?? ""));
    expect(connect).toBe(connected);
    expect(waiting).toBe(waited);
    // The hop had its whole 300 ms: what connecting took (long on a busy machine) is not the waiting's to make up.
    expect(waiting).toBeGreaterThan(0);
    expect(total).toBeGreaterThanOrEqual(299.9);
    expect(Math.round(((connect ?? 0) + (waiting ?? 0) + (other ?? 0)) * 10)).toBe(Math.round((total ?? 0) * 10));
  });

  it("marks an upgrade to HTTPS and shows the certificate of the HTTPS hop", async () => {
    const { code, stdout } = await trace([target.url("/upgrade")]);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^ {2}1 +301 Moved Permanently .+ → ${escapeRegExp(secure.url("/"))} \\(upgrade to HTTPS\\)$`, "m"));
    expect(stdout).toMatch(
      new RegExp(
        `^ {2}2 +200 OK +HEAD +127\\.0\\.0\\.1 +- +${MS} +${MS} +${MS} +${MS} +${MS} +${MS} +${escapeRegExp(secure.url("/"))}$`,
        "m",
      ),
    );
    expect(stdout).toMatch(
      /^ {2}certificate +CN=localhost, issuer .*CN=sitediag test CA, TLSv1\.[23], expires \d{4}-\d\d-\d\d \(in \d+ days\), chain of 1 +\(hop 2\)$/m,
    );
    // The HTTPS page sets no HSTS: said on its line, and warned about (a warning, so still exit 0).
    expect(stdout).toMatch(/^ {2}hsts +none +\(hop 2\)$/m);
    expect(stdout).toMatch(/^ *warning +hop 2 +hsts_missing +The chain starts on http:\/\/ /m);
  });

  it("shows each HTTPS answer's HSTS policy and an advertised h3, one line per distinct value; a year's policy warns of nothing", async () => {
    target.route("/to-hsts", { kind: "redirect", status: 301, location: secure.url("/hsts") });
    secure.route("/hsts", {
      kind: "status",
      status: 200,
      headers: { "strict-transport-security": "max-age=31536000; includeSubDomains; preload", "alt-svc": 'h3=":443"' },
    });
    const { code, stdout } = await trace([target.url("/to-hsts")]);
    expect(code).toBe(0);
    const lines = stdout.split("\n").filter((line) => line.startsWith("  hsts"));
    expect(lines).toEqual([
      expect.stringMatching(
        /^ {2}hsts +max-age=31536000 \(365 days\), includeSubDomains, preload; HTTP\/3 advertised \(Alt-Svc h3, not tried\) +\(hop 2\)$/,
      ),
    ]);
    expect(stdout).not.toMatch(/hsts_/);
  });

  it("three HTTPS hops on one certificate are one certificate line naming the hops, numbered as the hop table's rows", async () => {
    const { code, stdout } = await trace([secure.url("/a")]);
    expect(code).toBe(0);
    const certificates = stdout.split("\n").filter((line) => line.startsWith("  certificate"));
    expect(certificates).toHaveLength(1);
    expect(certificates[0]).toMatch(/^ {2}certificate +CN=localhost, .+ +\(hops 1, 2, 3\)$/);
    expect(stdout).toMatch(/^ {2}hsts +none +\(hops 1, 2, 3\)$/m);
    expect(stdout).not.toMatch(/cert #|tls hop/);
  });

  it("a row's phases add up to its total, and the total time is the sum of the totals, as printed", async () => {
    const { stdout } = await trace([target.url("/r/1")]);
    const cell = String.raw`(-|reused|\d+\.\d ms)`;
    const rows = [
      ...stdout.matchAll(
        new RegExp(`^ {2}\\d +\\d{3} .+? +HEAD +127\\.0\\.0\\.1 +${cell} +${cell} +${cell} +${cell} +${cell} +${cell} +${cell} `, "gm"),
      ),
    ];
    expect(rows).toHaveLength(3);
    const tenths = (text: string | undefined) =>
      text === undefined || !text.endsWith(" ms") ? 0 : Math.round(Number.parseFloat(text) * 10);
    let totals = 0;
    for (const row of rows) {
      const phases = row.slice(1, 7).reduce((sum, text) => sum + tenths(text), 0);
      expect(phases).toBe(tenths(row[7]));
      totals += tenths(row[7]);
    }
    expect(stdout).toContain(`  total time  ${(totals / 10).toFixed(1)} ms\n`);
  });

  it("--headers prints the header fields of every request, named as the table's rows, the HEAD a GET replaced included", async () => {
    const { stdout } = await trace(["--headers", target.url("/head-405")]);
    const url = target.url("/head-405");
    expect(stdout).toContain(`\nresponse headers\n  hop 1 (HEAD, then GET): HEAD ${url} (405)\n`);
    expect(stdout).toContain(`  hop 1: GET ${url} (200)\n`);
    expect(stdout).toContain(`  the final page, read again: GET ${url} (200)\n`);
  });

  it("ends a trace in flight on a stop signal with exit 130, long before its own timeouts", async () => {
    const { code, stdout, stderr, listenersLeft } = await trace([target.url("/silent")], {
      env: { SITEDIAG_TRACE_HOP_TIMEOUT_MS: "20000", SITEDIAG_TRACE_TOTAL_TIMEOUT_MS: "30000" },
      onRunning: stopOnceRequested(() => target.requests.length),
    });
    expect(code).toBe(130);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^interrupted/);
    expect(listenersLeft).toBe(0);
  });

  it("--json prints exactly the data object the REST API returns for the same trace", async () => {
    const service = await startTestService({ config: { tracePorts: [target.port, closedPort] } });
    try {
      for (const path of ["/r/1", "/loop/a", "/to-closed"]) {
        const url = target.url(path);
        const cli = await trace(["--json", url]);
        expect(cli.stdout.trimEnd()).not.toContain("\n");
        const response = await fetch(`${service.url}/api/v1/redirect-check?url=${encodeURIComponent(url)}`);
        const envelope = (await response.json()) as { ok: boolean; data: Record<string, unknown> };
        expect(envelope.ok).toBe(true);
        const fromCli = JSON.parse(cli.stdout) as Record<string, unknown>;
        expect(Object.keys(fromCli)).toEqual(Object.keys(envelope.data));
        expect(withoutClock(fromCli)).toEqual(withoutClock(envelope.data));
        expect(cli.code).toBe(["Healthy", "Redirects detected"].includes(String(fromCli["chainStatus"])) ? 0 : 1);
      }
    } finally {
      await service.close();
    }
  });

  it("refuses a start the policy will not visit, sending nothing; exit 2", async () => {
    const before = target.connections();
    for (const [env, rule, more] of [
      [{ SITEDIAG_TRACE_PORTS: "80,443" }, "port", "code input_port\\n"],
      [
        { SITEDIAG_ALLOW_CIDRS: "" },
        "non_public_address",
        "code input_non_public_address\\nrange 127\\.0\\.0\\.0/8 \\(Loopback, RFC 1122\\)\\n",
      ],
    ] as const) {
      const { code, stdout, stderr } = await trace([target.url("/end")], { env });
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toMatch(new RegExp(`^refused \\(${rule}\\): .+\\n${more}nothing was sent to the target\\n$`));
    }
    expect(target.connections()).toBe(before);

    for (const [input, rule] of [
      ["http://10.0.0.1/", "non_public_address"],
      ["http://[fd00::1]/", "non_public_address"],
      ["10.1.2.3", "non_public_address"],
      ["mailto:someone@127.0.0.1", "scheme"],
    ] as const) {
      const { code, stderr } = await trace([input], { env: { SITEDIAG_TRACE_PORTS: "80,443" } });
      expect(code, input).toBe(2);
      expect(stderr).toContain(`refused (${rule}): `);
    }
  });

  it("rejects unknown flags and missing or extra URLs with exit 2", async () => {
    for (const argv of [[], ["-x", target.url("/end")], [target.url("/end"), "again"]]) {
      const { code, stdout, stderr } = await trace(argv);
      expect(code, argv.join(" ")).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toMatch(/^sitediag trace: [^\n]+\nRun "sitediag trace --help" for every option\.\n$/);
    }
  });

  it("colours statuses and the arrow only for a terminal without NO_COLOR", async () => {
    const coloured = await trace([target.url("/loop/a")], { tty: true });
    expect(coloured.stdout).toContain("\u001b[1m\u001b[31mRedirect loop\u001b[39m\u001b[22m");
    expect(coloured.stdout).toContain("\u001b[36m302 Found\u001b[39m");
    expect(coloured.stdout).toContain("\u001b[36m→\u001b[39m");
    const healthy = await trace([target.url("/end")], { tty: true });
    expect(healthy.stdout).toContain("\u001b[1m\u001b[32mHealthy\u001b[39m\u001b[22m");
    expect((await trace([target.url("/loop/a")], { tty: true, colourEnv: { NO_COLOR: "true" } })).stdout).not.toContain(ANSI);
    expect((await trace([target.url("/loop/a")])).stdout).not.toContain(ANSI);
  });
});
