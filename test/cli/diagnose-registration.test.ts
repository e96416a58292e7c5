import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/check.js";
import { traceCommand } from "../../src/cli/trace.js";
import { startDnsServer, type DnsServer } from "../fixtures/dns-server.js";
import { startHttpTargets, type HttpTargets } from "../fixtures/http-targets.js";
import { rdapDomain } from "../fixtures/rdap-answers.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { startTraceTarget, type TraceTarget } from "../fixtures/trace-targets.js";
import { runDiagnose } from "../fixtures/cli-io.js";

// The report's domain line: the first host's registration (RDAP), under the dns lines; its warnings with the others.
let dns: DnsServer;
let target: TraceTarget;
let rdap: HttpTargets;
let dir: string;
let caFile: string;
let bootstrap: string;

beforeAll(async () => {
  const pki = await getTestPki();
  dns = await startDnsServer();
  dns.answer("www.soon.test", { a: ["127.0.0.1"] });
  dns.answer("www.held.test", { a: ["127.0.0.1"] });
  target = await startTraceTarget();
  target.route("/ok", { kind: "status", status: 200 });
  rdap = await startHttpTargets({ tls: pki.valid });
  rdap.route("/rdap/domain/soon.test", { kind: "respond", status: 200, body: rdapDomain("soon.test") });
  rdap.route("/rdap/domain/held.test", {
    kind: "respond",
    status: 200,
    body: rdapDomain("held.test", {
      status: ["server hold"],
      entities: [{ roles: ["registrar"], vcardArray: ["vcard", [["fn", {}, "text", "Evil\u001b[2J Registrar"]]] }],
    }),
  });
  dir = mkdtempSync(join(tmpdir(), "sitediag-cli-rdap-"));
  caFile = join(dir, "ca.pem");
  writeFileSync(caFile, pki.caPem);
  bootstrap = join(dir, "dns.json");
  writeFileSync(bootstrap, JSON.stringify({ services: [[["test"], [rdap.url("/rdap/", { secure: true })]]] }));
});

afterAll(async () => {
  await Promise.all([target?.close(), dns?.close(), rdap?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({
  SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8,::1/128",
  SITEDIAG_DNS_SERVERS: dns.server,
  SITEDIAG_TRACE_PORTS: String(target.port),
  SITEDIAG_CA_FILE: caFile,
  SITEDIAG_RDAP_BOOTSTRAP_FILE: bootstrap,
});
const named = (host: string) => `http://${host}:${target.port}/ok`;

/** Run again while the registry's answer came after the report's short grace (the lookup it started fills the cache). */
async function settled(run: () => ReturnType<typeof runDiagnose>): ReturnType<typeof runDiagnose> {
  for (let attempt = 1; ; attempt++) {
    const result = await run();
    if (!result.stdout.includes("had not answered when the check ended") || attempt === 10) return result;
    await new Promise((wait) => setTimeout(wait, 200));
  }
}

describe("the domain line", () => {
  it("sitediag check: registrar, dates and status; domain_expires_soon among the warnings", async () => {
    const { stdout } = await settled(() => runDiagnose(checkCommand, [named("www.soon.test")], env()));
    expect(stdout).toMatch(
      /^ {2}domain {2}soon\.test: registrar Example Registrar, Inc\.; registered 2001-02-03; expires \d{4}-\d{2}-\d{2}; client transfer prohibited$/m,
    );
    expect(stdout).toContain("domain_expires_soon");
  });

  it("sitediag trace: on hold, a problem; a hostile registrar name reaches no terminal", async () => {
    const { code, stdout } = await settled(() => runDiagnose(traceCommand, [named("www.held.test")], env()));
    expect(stdout).toMatch(/^ {2}domain {2}held\.test: registrar Evil\ufffd\[2J Registrar; .*on hold: server hold$/m);
    expect(stdout).toContain("domain_on_hold");
    expect(stdout).not.toContain("\u001b[2J");
    expect(code).not.toBe(0);
  });

  it("an IP-address host has no registrable domain: no domain line, nothing asked", async () => {
    const before = rdap.requests.length;
    const { stdout } = await runDiagnose(checkCommand, [`http://127.0.0.1:${target.port}/ok`], env());
    expect(stdout).not.toMatch(/^ {2}domain /m);
    expect(rdap.requests.length).toBe(before);
  });
});
