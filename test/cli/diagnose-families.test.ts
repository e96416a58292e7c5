import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/check.js";
import { traceCommand } from "../../src/cli/trace.js";
import { type FamilyTargets, startFamilyTargets } from "../fixtures/family-targets.js";
import { runDiagnose } from "../fixtures/cli-io.js";

// A hosts file names dual.test on 127.0.0.1 and ::1; each family has its own server on one port.
let dir: string;
let disagree: FamilyTargets;
let noIpv4: FamilyTargets;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sitediag-cli-families-"));
  writeFileSync(join(dir, "hosts"), "127.0.0.1 dual.test\n::1 dual.test\n127.0.0.1 v4only.test\n");
  disagree = await startFamilyTargets({ 4: { status: 503 }, 6: { status: 200 } });
  noIpv4 = await startFamilyTargets({ 4: "closed", 6: { status: 200 } });
  env = {
    SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8,::1/128",
    SITEDIAG_HOSTS_FILE: join(dir, "hosts"),
    SITEDIAG_TRACE_PORTS: `${disagree.port},${noIpv4.port}`,
  };
});

afterAll(async () => {
  await Promise.all([disagree?.close(), noIpv4?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe("sitediag check and trace show both IP families", () => {
  it("check: a row per family, the check's own first, and the warning with the check's warnings; still UP and exit 0", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, [disagree.url("/", "dual.test")], env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^UP {2}/);
    expect(stdout).toMatch(/^both IP families$/m);
    expect(stdout).toMatch(/^ {2}IPv6 +::1 +200 .*ms +the check's request$/m);
    expect(stdout).toMatch(/^ {2}IPv4 +127\.0\.0\.1 +503 .*ms *$/m);
    expect(stdout).toMatch(
      /^ {2}warning +request 1 +families_disagree +GET http:\/\/dual\.test:\d+\/ answers 200 over IPv6 \(::1\) but 503 over IPv4 \(127\.0\.0\.1\)$/m,
    );
  });

  it("check: the family that failed, with its failure", async () => {
    const { stdout } = await runDiagnose(checkCommand, [noIpv4.url("/", "dual.test")], env);
    expect(stdout).toMatch(/^ {2}IPv4 +127\.0\.0\.1 +failed at connect: .*connect_refused\)/m);
    expect(stdout).toMatch(/^ {2}warning +request 1 +ipv4_unreachable +GET .* failed over IPv4 \(127\.0\.0\.1\): Connection refused$/m);
  });

  it("trace: the rows, and the warning once, in the trace's warnings on hop 1", async () => {
    const { code, stdout } = await runDiagnose(traceCommand, [disagree.url("/", "dual.test")], env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ {2}IPv4 +127\.0\.0\.1 +503 /m);
    expect(stdout.match(/families_disagree/g)).toHaveLength(1);
    expect(stdout).toMatch(/^ {2}warning +hop 1 +families_disagree +HEAD http:\/\/dual\.test:\d+\/ answers 200/m);
  });

  it("a name with one family: no such part", async () => {
    const { stdout } = await runDiagnose(checkCommand, [disagree.url("/", "v4only.test")], env);
    expect(stdout).not.toContain("both IP families");
    expect(disagree.connections(6)).toBe(2);
  });
});
