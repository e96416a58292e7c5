import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/check.js";
import { traceCommand } from "../../src/cli/trace.js";
import { getOcspFixture, type OcspFixture, startStaplingTarget, type StaplingTarget } from "../fixtures/ocsp-staples.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { runDiagnose } from "../fixtures/cli-io.js";

// The stapled OCSP answer on a line beside the certificate, in `check` and `trace`.
let fixture: OcspFixture;
let dir: string;
let env: Record<string, string>;
const sites: Record<string, StaplingTarget> = {};

beforeAll(async () => {
  const pki = await getTestPki();
  fixture = await getOcspFixture();
  dir = mkdtempSync(join(tmpdir(), "sitediag-cli-ocsp-"));
  writeFileSync(join(dir, "ca.pem"), pki.caPem);
  sites["revoked"] = await startStaplingTarget(fixture.revoked, fixture.answers.revoked);
  sites["good"] = await startStaplingTarget(fixture.good, fixture.answers.good);
  sites["none"] = await startStaplingTarget(fixture.good, null);
  sites["garbage"] = await startStaplingTarget(fixture.good, Buffer.from("garbage stapled"));
  sites["other"] = await startStaplingTarget(fixture.good, fixture.answers.revoked);
  const ports = Object.values(sites).map((site) => new URL(site.url).port);
  env = {
    SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8,::1/128",
    SITEDIAG_CA_FILE: join(dir, "ca.pem"),
    SITEDIAG_TRACE_PORTS: ports.join(","),
    SITEDIAG_TRACE_HOP_TIMEOUT_MS: "5000",
    SITEDIAG_TRACE_TOTAL_TIMEOUT_MS: "10000",
  };
});

afterAll(async () => {
  await Promise.all(Object.values(sites).map((site) => site.close()));
  rmSync(dir, { recursive: true, force: true });
});

const url = (name: string) => sites[name]?.url ?? "";
const ocspLines = (stdout: string) => stdout.split("\n").filter((line) => line.startsWith("  ocsp"));

describe("sitediag check and trace: the stapled OCSP line", () => {
  it("check: revoked, with its date and reason, for this certificate, verified; certificate_revoked is a problem (exit 1)", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, [url("revoked")], env);
    expect(code).toBe(1);
    expect(ocspLines(stdout)).toEqual([
      expect.stringMatching(
        /^ {2}ocsp +revoked 2026-01-01 \(keyCompromise\), for this certificate, signature verified, next update \d{4}-\d\d-\d\d +\(request 1\)$/,
      ),
    ]);
  });

  it("trace: the revoked hops share one line, and certificate_revoked is a problem (exit 1)", async () => {
    const { code, stdout } = await runDiagnose(traceCommand, [`${url("revoked")}redirect`], env);
    expect(code).toBe(1);
    expect(ocspLines(stdout)).toEqual([expect.stringMatching(/^ {2}ocsp +revoked 2026-01-01 \(keyCompromise\), .+ +\(hops 1, 2\)$/)]);
    expect(stdout).toMatch(
      /^ *problem +hop 1 +certificate_revoked +The certificate of https:\/\/127\.0\.0\.1:\d+\/redirect is revoked since 2026-01-01/m,
    );
  });

  it.each([
    ["good", /^ {2}ocsp +good, for this certificate, signature verified, next update \d{4}-\d\d-\d\d +\(hop 1\)$/],
    ["none", /^ {2}ocsp +nothing stapled \(no OCSP responder is asked\) +\(hop 1\)$/],
    ["garbage", /^ {2}ocsp +invalid staple: not a DER-encoded OCSP response +\(hop 1\)$/],
    ["other", /^ {2}ocsp +revoked 2026-01-01 \(keyCompromise\), for another certificate, signature verified, .+\(hop 1\)$/],
  ])("trace, %s staple: its line, and no problem", async (name, line) => {
    const { code, stdout } = await runDiagnose(traceCommand, [url(name)], env);
    expect(code).toBe(0);
    expect(ocspLines(stdout)).toEqual([expect.stringMatching(line)]);
    expect(stdout).not.toMatch(/certificate_revoked/);
  });

  it("asked nothing of the responder the certificates name", () => {
    expect(fixture.responder.contacts()).toBe(0);
  });
});
