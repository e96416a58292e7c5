import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/check.js";
import { startDnsServer } from "../fixtures/dns-server.js";
import { closedLoopbackPort, type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { withoutClock } from "../fixtures/clock-free.js";
import { startTestService } from "../fixtures/service-harness.js";
import { oddCertificate } from "../fixtures/odd-certificates.js";
import { seededRandom } from "../fixtures/seeded-random.js";
import { CLOUDFLARE_BAD_GATEWAY, CLOUDFLARE_CHALLENGE } from "../fixtures/proxy-answers.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { type DiagnoseRunOptions, escapeRegExp, runDiagnose, stopOnceRequested } from "../fixtures/cli-io.js";

const LOOPBACK = "127.0.0.0/8,::1/128";
const ANSI = "\u001b[";

/** Runs `sitediag check` in-process with captured output, allowed to visit loopback. */
function check(argv: readonly string[], options?: DiagnoseRunOptions) {
  return runDiagnose(checkCommand, argv, { SITEDIAG_ALLOW_CIDRS: LOOPBACK }, options);
}

describe("sitediag check", () => {
  let targets: HttpTargets;
  let tlsTargets: HttpTargets;
  let dir: string;
  let caFile: string;

  beforeAll(async () => {
    const pki = await getTestPki();
    dir = mkdtempSync(join(tmpdir(), "sitediag-cli-"));
    caFile = join(dir, "ca.pem");
    writeFileSync(caFile, pki.caPem);
    targets = await startHttpTargets({
      routes: {
        "/old": { kind: "redirect", status: 301, location: "/new" },
        "/new": { kind: "respond", status: 200, body: "fine" },
        "/missing": { kind: "respond", status: 404 },
        "/broken": { kind: "respond", status: 503 },
        "/hang": { kind: "hang" },
        "/challenge": CLOUDFLARE_CHALLENGE,
        "/cf-502": CLOUDFLARE_BAD_GATEWAY,
        "/cookie": {
          kind: "respond",
          status: 200,
          headers: { "X-Served-By": "edge-1", "Set-Cookie": ["sid=s3cr3t; Path=/; HttpOnly", "theme=dark"] },
        },
      },
    });
    tlsTargets = await startHttpTargets({ tls: pki.valid, routes: { "/": { kind: "respond", status: 200 } } });
  });
  afterAll(async () => {
    await targets?.close();
    await tlsTargets?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("reports an up site with its status, each request's phase timings and the redirect arrow; exit 0", async () => {
    const { code, stdout, stderr, listenersLeft } = await check([targets.url("/old")]);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    expect(listenersLeft).toBe(0);
    const lines = stdout.split("\n");
    expect(lines[0]).toBe(`UP  ${targets.url("/old")}`);
    expect(stdout).toMatch(/^ {2}answer +200 OK$/m);
    expect(stdout).toMatch(new RegExp(`^ {2}final URL +${escapeRegExp(targets.url("/new"))}$`, "m"));
    expect(stdout).toMatch(/^ {2}redirects +1$/m);
    expect(stdout).toMatch(/^ {2}response time +\d+\.\d ms$/m);
    expect(stdout).not.toMatch(/reason/);
    expect(stdout).toMatch(/^ {2}# +answer +address +dns +connect +tls +waiting +receiving +other +total +url$/m);
    const ms = String.raw`\d+(\.\d)? ms`;
    expect(stdout).toMatch(
      new RegExp(
        `^ {2}1 +301 Moved Permanently +127\\.0\\.0\\.1 +- +${ms} +- +${ms} +${ms} +${ms} +${ms} +${escapeRegExp(targets.url("/old"))} → ${escapeRegExp(targets.url("/new"))}$`,
        "m",
      ),
    );
    // Same origin, a keep-alive server: the second request rode the first's connection.
    expect(stdout).toMatch(
      new RegExp(`^ {2}2 +200 OK +127\\.0\\.0\\.1 +- +reused +- +${ms} +${ms} +${ms} +${ms} +${escapeRegExp(targets.url("/new"))}$`, "m"),
    );
    expect(stdout).not.toContain(ANSI);
    // One rounding rule: each row's phases add up to its total as printed, and the response time is the sum of the totals.
    const cell = String.raw`(-|reused|\d+\.\d ms)`;
    const rows = [
      ...stdout.matchAll(
        new RegExp(`^ {2}\\d +\\d{3} .+? +127\\.0\\.0\\.1 +${cell} +${cell} +${cell} +${cell} +${cell} +${cell} +${cell} `, "gm"),
      ),
    ];
    expect(rows).toHaveLength(2);
    const tenths = (text: string | undefined) =>
      text === undefined || !text.endsWith(" ms") ? 0 : Math.round(Number.parseFloat(text) * 10);
    let totals = 0;
    for (const row of rows) {
      expect(row.slice(1, 7).reduce((sum, text) => sum + tenths(text), 0)).toBe(tenths(row[7]));
      totals += tenths(row[7]);
    }
    expect(stdout).toContain(`  response time  ${(totals / 10).toFixed(1)} ms\n`);
  });

  it("says how far a request that was never answered got: connected, then no response, the wait in its own column", async () => {
    const { code, stdout } = await check([targets.url("/hang")], { env: { SITEDIAG_SITE_TIMEOUT_MS: "400" } });
    expect(code).toBe(1);
    const ms = String.raw`(\d+\.\d) ms`;
    const row = new RegExp(
      `^ {2}1 +timed out at http: connected in ${ms}, then no response in ${ms} \\(RESPONSE_HEAD_TIMEOUT\\) +127\\.0\\.0\\.1 +- +${ms} +- +${ms} +- +${ms} +${ms} `,
      "m",
    ).exec(stdout);
    expect(row).not.toBeNull();
    const [connected, waited, connect, waiting, other, total] = (row ?? [])
      .slice(1)
      .map((text) => Math.round(Number.parseFloat(text ?? "") * 10));
    expect(connect).toBe(connected);
    expect(waiting).toBe(waited);
    // The request had its whole 400 ms: what connecting took (long on a busy machine) is not the waiting's to make up.
    expect(waiting).toBeGreaterThan(0);
    expect(total).toBeGreaterThanOrEqual(3999);
    expect((connect ?? 0) + (waiting ?? 0) + (other ?? 0)).toBe(total);
  });

  it("--headers prints each response's header fields as received, names as sent, cookie values redacted", async () => {
    const { code, stdout } = await check(["--headers", targets.url("/cookie")]);
    expect(code).toBe(0);
    expect(stdout).toContain(`\nresponse headers\n  request 1: GET ${targets.url("/cookie")} (200)\n`);
    expect(stdout).toMatch(/^ {4}X-Served-By: edge-1\n {4}Set-Cookie: sid=\[redacted\]\n {4}Set-Cookie: theme=\[redacted\]\n/m);
    expect(stdout).not.toContain("s3cr3t");
    expect(stdout).not.toContain("dark");
    expect((await check([targets.url("/cookie")])).stdout).not.toContain("response headers");
  });

  it("counts a 404 as up, as the contract does", async () => {
    const { code, stdout } = await check([targets.url("/missing")]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^UP {2}/);
    expect(stdout).toMatch(/^ {2}answer +404 Not Found$/m);
  });

  it("reports a server error as down with its reason and stage; exit 1", async () => {
    const { code, stdout } = await check([targets.url("/broken")]);
    expect(code).toBe(1);
    expect(stdout.split("\n")[0]).toBe(`DOWN  ${targets.url("/broken")}`);
    expect(stdout).toMatch(/^ {2}answer +503 Service Unavailable$/m);
    expect(stdout).toMatch(/^ {2}reason +Server returned 503 Service Unavailable$/m);
    expect(stdout).toMatch(/^ {2}failed stage +http$/m);
  });

  it("reports a Cloudflare challenge as the amber third state, CHALLENGED, in words a person can act on; exit 0 as the API says up", async () => {
    const { code, stdout } = await check([targets.url("/challenge")]);
    expect(code).toBe(0);
    expect(stdout.split("\n")[0]).toBe(`CHALLENGED  ${targets.url("/challenge")}`);
    expect(stdout).toMatch(/^ {2}answer +403 Forbidden$/m);
    expect(stdout).toMatch(/^ {2}proxy +Reachable, but a Cloudflare challenge answered: a browser may pass it; automated clients won't$/m);
    expect(stdout).not.toMatch(/^UP/);
  });

  it("words a Cloudflare 502 as the origin's failure, agreeing with DOWN; exit 1", async () => {
    const { code, stdout } = await check([targets.url("/cf-502")]);
    expect(code).toBe(1);
    expect(stdout.split("\n")[0]).toBe(`DOWN  ${targets.url("/cf-502")}`);
    expect(stdout).toMatch(/^ {2}proxy +Cloudflare answered 502: it could not reach the origin server, or got no valid answer from it$/m);
    expect(stdout).not.toMatch(/not an outage|challenge|\(unknown\)/);
  });

  it("reports a refused connection as down at the connect stage, with no response; exit 1", async () => {
    const url = `http://127.0.0.1:${await closedLoopbackPort()}/`;
    const { code, stdout } = await check([url]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^ {2}answer +no response$/m);
    expect(stdout).toMatch(/^ {2}reason +Connection refused$/m);
    expect(stdout).toMatch(/^ {2}failed stage +connect$/m);
    expect(stdout).toMatch(/^ {2}response time +-$/m);
    expect(stdout).toMatch(
      /^ {2}1 +failed at connect: connecting failed after \d+\.\d ms \(ECONNREFUSED\) +127\.0\.0\.1 +- +\d+\.\d ms +- +- +- +\d+\.\d ms +\d+\.\d ms +http:\/\/127\.0\.0\.1:\d+\/$/m,
    );
  });

  it("--json prints exactly the data object the REST API returns for the same check", async () => {
    const service = await startTestService();
    try {
      for (const path of ["/old", "/broken"]) {
        const target = targets.url(path);
        const cli = await check(["--json", target]);
        expect(cli.stdout.endsWith("}\n")).toBe(true);
        expect(cli.stdout.trimEnd()).not.toContain("\n");
        const response = await fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(target)}`);
        const envelope = (await response.json()) as { ok: boolean; data: Record<string, unknown> };
        expect(envelope.ok).toBe(true);
        const fromCli = JSON.parse(cli.stdout) as Record<string, unknown>;
        // Only what the clock decides may differ between two runs; key order and every other value must match.
        expect(Object.keys(fromCli)).toEqual(Object.keys(envelope.data));
        expect(typeof fromCli["responseTime"]).toBe("number");
        expect(withoutClock(fromCli)).toEqual(withoutClock(envelope.data));
        expect(cli.code).toBe(fromCli["status"] === "up" ? 0 : 1);
      }
    } finally {
      await service.close();
    }
  });

  it("--json keeps the contract's nulls when nothing answered", async () => {
    const url = `http://127.0.0.1:${await closedLoopbackPort()}/`;
    const { code, stdout } = await check(["--json", url]);
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toEqual({
      requestedUrl: url,
      finalUrl: null,
      status: "down",
      statusCode: null,
      statusText: null,
      responseTime: null,
      reason: "Connection refused",
      failedStage: "connect",
      redirectHops: null,
      proxyBlocked: false,
    });
  });

  it("refuses a target the policy will not visit, sending nothing to it; exit 2", async () => {
    // Without SITEDIAG_ALLOW_CIDRS, loopback is as private as any other range, by address or by a name
    // resolving to it (answered by a loopback DNS server, so no query leaves the machine).
    const dns = await startDnsServer();
    try {
      dns.answer("loopback.test", { a: ["127.0.0.1"] });
      const closedPolicy = { SITEDIAG_ALLOW_CIDRS: "", SITEDIAG_DNS_SERVERS: dns.server };
      const before = targets.requests.length;
      for (const url of [targets.url("/new"), targets.url("/new", { hostname: "loopback.test" })]) {
        const { code, stdout, stderr } = await check([url], { env: closedPolicy });
        expect(code).toBe(2);
        expect(stdout).toBe("");
        expect(stderr).toMatch(
          /^refused \(non_public_address\): .+\ncode input_(?:non_public_address|resolves_non_public)\nrange 127\.0\.0\.0\/8 \(Loopback, RFC 1122\)\nnothing was sent to the target\n$/,
        );
      }
      expect(targets.requests.length).toBe(before);
      expect(dns.queries.map((query) => query.name)).toContain("loopback.test");
    } finally {
      await dns.close();
    }

    for (const [url, rule, refusalCode, range] of [
      ["http://10.0.0.1/", "non_public_address", "input_non_public_address", "range 10.0.0.0/8 (Private-Use, RFC 1918)\n"],
      [
        "http://169.254.169.254/latest/meta-data/",
        "non_public_address",
        "input_non_public_address",
        "range 169.254.0.0/16 (Link Local, RFC 3927)\n",
      ],
      ["http://[fd00::1]/", "non_public_address", "input_non_public_address", "range fc00::/7 (Unique-Local, RFC 4193)\n"],
      ["ftp://127.0.0.1/", "scheme", "input_scheme", ""],
      ["http://user:secret@127.0.0.1/", "credentials", "input_credentials", ""],
    ] as const) {
      const { code, stdout, stderr } = await check([url]);
      expect(code, url).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toContain(`refused (${rule}): `);
      expect(stderr, url).toContain(`\ncode ${refusalCode}\n${range}nothing was sent to the target\n`);
    }
  });

  it("checks a bare domain from https://, as trace does, and shows the URL checked", async () => {
    const bare = `127.0.0.1:${tlsTargets.httpsPort ?? 0}/`;
    const { code, stdout, stderr } = await check([bare], { env: { SITEDIAG_CA_FILE: caFile } });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout.split("\n")[0]).toBe(`UP  https://${bare}`);
    const json = await check(["--json", `  ${bare}  `], { env: { SITEDIAG_CA_FILE: caFile } });
    expect(JSON.parse(json.stdout)).toMatchObject({ status: "up", requestedUrl: `https://${bare}` });
  });

  it("rejects a wrong command line with one line on stderr and where the options are, not the whole usage; exit 2; --help is exit 0 on stdout", async () => {
    for (const argv of [
      [],
      ["--verbose", targets.url("/new")],
      [targets.url("/new"), targets.url("/old")],
      ["--json=yes", targets.url("/new")],
    ]) {
      const { code, stdout, stderr } = await check(argv);
      expect(code, argv.join(" ")).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toMatch(/^sitediag check: [^\n]+\nRun "sitediag check --help" for every option\.\n$/);
    }
    expect((await check(["--json=yes", targets.url("/new")])).stderr).toContain("sitediag check: --json takes no value");
    const before = targets.requests.length;
    const help = await check(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("usage: sitediag check [--json] URL");
    expect(targets.requests.length).toBe(before);
  });

  it("colours the verdict and statuses only for a terminal, and never with NO_COLOR or --json", async () => {
    const coloured = await check([targets.url("/old")], { tty: true });
    expect(coloured.stdout).toContain("\u001b[32m\u001b[1mUP\u001b[22m\u001b[39m");
    expect(coloured.stdout).toContain("\u001b[36m301 Moved Permanently\u001b[39m");
    const down = await check([targets.url("/broken")], { tty: true });
    expect(down.stdout).toContain("\u001b[31m503 Service Unavailable\u001b[39m");

    expect((await check([targets.url("/old")], { tty: true, colourEnv: { NO_COLOR: "1" } })).stdout).not.toContain(ANSI);
    expect((await check(["--json", targets.url("/old")], { tty: true })).stdout).not.toContain(ANSI);
    // An empty NO_COLOR does not count (no-color.org).
    expect((await check([targets.url("/old")], { tty: true, colourEnv: { NO_COLOR: "" } })).stdout).toContain(ANSI);
  });

  it("trusts the CA named by SITEDIAG_CA_FILE, as the server does, and shows the certificate", async () => {
    const url = tlsTargets.url("/", { secure: true });
    const trusted = await check([url], { env: { SITEDIAG_CA_FILE: caFile } });
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toMatch(
      /^ {2}certificate +CN=localhost, issuer .*CN=sitediag test CA, TLSv1\.[23], expires \d{4}-\d\d-\d\d \(in \d+ days\), chain of 1 +\(request 1\)$/m,
    );
    expect(trusted.stdout).toMatch(/^ {2}1 +200 OK +127\.0\.0\.1 +- +\S+ ms +\S+ ms +\S+ ms +\S+ ms +\S+ ms +\S+ ms +https:/m);

    const untrusted = await check([url]);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stdout).toMatch(/^ {2}failed stage +tls$/m);
  });

  it("reports a certificate whose dates Node cannot read, and whose subjectAltName does not decode, as down at tls; the process lives (issue 28, rows 1-2)", async () => {
    for (const kind of ["bad-date", "undecodable-san"] as const) {
      const odd = await oddCertificate(seededRandom(28), kind);
      const target = await startHttpTargets({ tls: { key: odd.key, cert: odd.cert }, routes: { "/": { kind: "respond", status: 200 } } });
      try {
        const { code, stdout } = await check([target.url("/", { secure: true })], { env: { SITEDIAG_CA_FILE: caFile } });
        expect(code, odd.name).toBe(1);
        expect(stdout, odd.name).toMatch(/^ {2}failed stage +tls$/m);
      } finally {
        await target.close();
      }
    }
  });

  it("stops with exit 2 when SITEDIAG_CA_FILE cannot be read", async () => {
    const before = targets.requests.length;
    const { code, stdout, stderr } = await check([targets.url("/new")], { env: { SITEDIAG_CA_FILE: join(dir, "absent.pem") } });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^configuration error in SITEDIAG_CA_FILE: cannot read .*absent\.pem: /);
    expect(targets.requests.length).toBe(before);
  });

  it("ends a check in flight on a stop signal with exit 130", async () => {
    const { code, stdout, stderr, listenersLeft } = await check([targets.url("/hang")], {
      onRunning: stopOnceRequested(() => targets.requests.length),
    });
    expect(code).toBe(130);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^interrupted/);
    expect(listenersLeft).toBe(0);
  });
});
