import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/check.js";
import { getChainPki } from "../fixtures/chain-certificates.js";
import { type FamilyTargets, startFamilyTargets } from "../fixtures/family-targets.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { getOcspFixture, startStaplingTarget, type StaplingTarget } from "../fixtures/ocsp-staples.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { runDiagnose } from "../fixtures/cli-io.js";

// `sitediag check` lists every evidence warning of details.warnings once, as a
// trace lists its warnings, and a problem among them on an up site shows in
// the verdict line and the exit status.
let dir: string;
let revoked: StaplingTarget;
let expiringSoon: HttpTargets;
let disagree: FamilyTargets;
let env: Record<string, string>;

beforeAll(async () => {
  const [pki, chain, ocsp] = await Promise.all([getTestPki(), getChainPki(), getOcspFixture()]);
  dir = mkdtempSync(join(tmpdir(), "sitediag-cli-check-warnings-"));
  // The OCSP leaves hang off the test CA, the 5-day leaf off the chain root: trust both.
  writeFileSync(join(dir, "ca.pem"), `${pki.caPem}\n${chain.rootPem}\n`);
  writeFileSync(join(dir, "hosts"), "127.0.0.1 dual.test\n::1 dual.test\n");
  revoked = await startStaplingTarget(ocsp.revoked, ocsp.answers.revoked);
  expiringSoon = await startHttpTargets({ tls: chain.expiresIn5Days, routes: { "/": { kind: "respond", status: 200 } } });
  disagree = await startFamilyTargets({ 4: { status: 503 }, 6: { status: 200 } });
  env = { SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8,::1/128", SITEDIAG_CA_FILE: join(dir, "ca.pem"), SITEDIAG_HOSTS_FILE: join(dir, "hosts") };
}, 60_000);

afterAll(async () => {
  await Promise.all([revoked?.close(), expiringSoon?.close(), disagree?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const warningsPart = (stdout: string) => stdout.slice(stdout.lastIndexOf("\nwarnings\n") + 1);

describe("sitediag check: the evidence warnings", () => {
  it("a revoked certificate on an up site: counted on the verdict line, named under it, listed once, exit 1", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, [revoked.url], env);
    expect(code).toBe(1);
    const lines = stdout.split("\n");
    expect(lines[0]).toMatch(/^UP, 1 problem {2}https:\/\/127\.0\.0\.1:\d+\/$/);
    expect(lines[1]).toMatch(/^ {2}answer +200 OK$/);
    expect(lines[2]).toMatch(/^ {2}problem +The certificate of https:\/\/127\.0\.0\.1:\d+\/ is revoked since 2026-01-01/);
    expect(warningsPart(stdout)).toMatch(
      /^warnings\n {2}problem +request 1 +certificate_revoked +The certificate of https:\/\/127\.0\.0\.1:\d+\/ is revoked since 2026-01-01/,
    );
    expect(stdout.match(/certificate_revoked/g)).toHaveLength(1);
  });

  it("plain --json gathers no evidence, so its exit status is the API's status alone", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, ["--json", revoked.url], env);
    expect(JSON.parse(stdout)).toMatchObject({ status: "up" });
    expect(code).toBe(0);
    const detailed = await runDiagnose(checkCommand, ["--json", "--details", revoked.url], env);
    expect(detailed.code).toBe(1);
  });

  it("a certificate with 5 days left: a warning row on request 1, the verdict stays UP, exit 0", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, [expiringSoon.url("/", { secure: true })], env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^UP {2}https:/);
    expect(stdout).not.toMatch(/^ {2}problem/m);
    expect(warningsPart(stdout)).toMatch(
      /^warnings\n {2}warning +request 1 +certificate_expires_soon +The certificate "localhost" of https:\/\/127\.0\.0\.1:\d+\/ expires in 5 days/,
    );
  });

  it("families that disagree: the family part keeps its rows, the warning is listed once with the others", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, [disagree.url("/", "dual.test")], env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^both IP families\n {2}IPv6 +::1 +200 .*the check's request\n {2}IPv4 +127\.0\.0\.1 +503 .*\n\nwarnings\n/m);
    expect(warningsPart(stdout)).toMatch(
      /^warnings\n {2}warning +request 1 +families_disagree +GET http:\/\/dual\.test:\d+\/ answers 200 over IPv6 \(::1\) but 503 over IPv4 \(127\.0\.0\.1\)\n$/,
    );
    expect(stdout.match(/families_disagree/g)).toHaveLength(1);
  });
});
