import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/check.js";
import { traceCommand } from "../../src/cli/trace.js";
import { startDnsServer, type DnsServer } from "../fixtures/dns-server.js";
import { startTraceTarget, type TraceTarget } from "../fixtures/trace-targets.js";
import { escapeRegExp, runDiagnose } from "../fixtures/cli-io.js";

// The report's dns lines: one per lookup of details.resolutions, naming the rows that used it.
let dns: DnsServer;
let target: TraceTarget;
let dir: string;
let hostsFile: string;

beforeAll(async () => {
  dns = await startDnsServer();
  dns.answer("www.cli.test", { cname: "edge.cli.test", ttl: 600 });
  dns.answer("edge.cli.test", { a: ["127.0.0.1"], ttl: 45 });
  dns.answer("gone.cli.test", "nxdomain");
  dns.answer("signed.cli.test", { a: ["127.0.0.1"], ad: true });
  dns.answer("bogus.cli.test", { rcode: "servfail", ede: [{ code: 6, text: "sig \u001b[2J\u202e expired" }] });
  dns.answer("odd.cli.test", { cname: "a\u001b[2J\u202eb.cli.test" });
  dns.answer("a\u001b[2J\u202eb.cli.test", { a: ["127.0.0.1"] });
  dir = mkdtempSync(join(tmpdir(), "sitediag-cli-dns-"));
  hostsFile = join(dir, "hosts");
  writeFileSync(hostsFile, "127.0.0.1 listed.cli.test\n");
  target = await startTraceTarget();
  target.route("/start", { kind: "redirect", status: 301, location: `http://listed.cli.test:${target.port}/end` });
  target.route("/end", { kind: "status", status: 200 });
  target.route("/to-gone", { kind: "redirect", status: 302, location: `http://gone.cli.test:${target.port}/` });
});

afterAll(async () => {
  await Promise.all([target?.close(), dns?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({
  SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8,::1/128",
  SITEDIAG_DNS_SERVERS: dns.server,
  SITEDIAG_HOSTS_FILE: hostsFile,
  SITEDIAG_TRACE_PORTS: String(target.port),
});
const named = (host: string, path: string) => `http://${host}:${target.port}${path}`;
const MS = "\\d+\\.\\d ms";

describe("sitediag check", () => {
  it("a line per lookup: the chain, each answer with its TTL, the time and the server; the hosts file named", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, [named("www.cli.test", "/start")], env());
    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(
        `^ {2}dns {2}www\\.cli\\.test → edge\\.cli\\.test: 127\\.0\\.0\\.1 \\(ttl 45\\); ${MS} from ${escapeRegExp(dns.server)} {2}\\(request 1\\)$`,
        "m",
      ),
    );
    expect(stdout).toMatch(
      new RegExp(
        `^ {2}dns {2}listed\\.cli\\.test: 127\\.0\\.0\\.1; ${MS} from the hosts file ${escapeRegExp(hostsFile)} {2}\\(request 2\\)$`,
        "m",
      ),
    );
  });

  it("a hostile CNAME target is printed as c-ares escapes it: no terminal escape reaches the terminal", async () => {
    const { stdout } = await runDiagnose(checkCommand, [named("odd.cli.test", "/end")], env());
    const line = stdout.split("\n").find((text) => text.startsWith("  dns  odd.cli.test"));
    expect(line).toContain("odd.cli.test → a\\027[2J\\226\\128\\174b.cli.test");
    expect(stdout).not.toContain("\u001b[2J");
    expect(stdout).not.toContain("\u202e");
  });
});

describe("sitediag trace", () => {
  it("the hop that failed on NXDOMAIN: the rcode beside the failure code", async () => {
    const { code, stdout } = await runDiagnose(traceCommand, [named("www.cli.test", "/to-gone")], env());
    expect(code).not.toBe(0);
    expect(stdout).toMatch(/^ {2}dns {2}www\.cli\.test → edge\.cli\.test: 127\.0\.0\.1 \(ttl 45\); .+ {2}\(hop 1\)$/m);
    expect(stdout).toMatch(
      new RegExp(
        `^ {2}dns {2}gone\\.cli\\.test: NXDOMAIN \\(dns_no_such_host\\); ${MS} from ${escapeRegExp(dns.server)} {2}\\(hop 2\\)$`,
        "m",
      ),
    );
  });
});

describe("the first host's DNSSEC under its dns line", () => {
  it("validated, and a bogus one with its Extended DNS Error, no terminal escape reaching the terminal", async () => {
    const signed = await runDiagnose(checkCommand, [named("signed.cli.test", "/end")], env());
    expect(signed.stdout).toMatch(
      /^ {2}dns {2}signed\.cli\.test: .+\n {2}dnssec {2}signed\.cli\.test: validated \(the resolver set AD\)$/m,
    );
    const bogus = await runDiagnose(checkCommand, [named("bogus.cli.test", "/end")], env());
    expect(bogus.code).not.toBe(0);
    expect(bogus.stdout).toMatch(
      /^ {2}dnssec {2}bogus\.cli\.test: bogus; Extended DNS Error 6 DNSSEC Bogus "sig \ufffd\[2J\ufffd expired"$/m,
    );
    expect(bogus.stdout).toContain("dns_dnssec_bogus");
    expect(bogus.stdout).not.toContain("\u001b[2J");
    expect(bogus.stdout).not.toContain("\u202e");
  });
});
