import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/check.js";
import { traceCommand } from "../../src/cli/trace.js";
import { getChainPki } from "../fixtures/chain-certificates.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { runDiagnose } from "../fixtures/cli-io.js";

// The chain under the certificate line, the failing link named, and certificate_expires_soon, in the CLI.
let dir: string;
let env: Record<string, string>;
let expiredIntermediate: HttpTargets;
let expiringSoon: HttpTargets;

beforeAll(async () => {
  const pki = await getChainPki();
  dir = mkdtempSync(join(tmpdir(), "sitediag-cli-chain-"));
  writeFileSync(join(dir, "root.pem"), pki.rootPem);
  env = { SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8,::1/128", SITEDIAG_CA_FILE: join(dir, "root.pem") };
  expiredIntermediate = await startHttpTargets({ tls: pki.expiredIntermediate, routes: { "/": { kind: "respond", status: 200 } } });
  expiringSoon = await startHttpTargets({ tls: pki.expiresIn5Days, routes: { "/": { kind: "respond", status: 200 } } });
}, 60_000);

afterAll(async () => {
  await expiredIntermediate?.close();
  await expiringSoon?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the chain in the CLI", () => {
  it("check: each certificate under the certificate line, leaf first, the expired intermediate marked in words", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, [expiredIntermediate.url("/", { secure: true })], env);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^ {2}certificate +CN=localhost, .+not trusted: CERT_HAS_EXPIRED +\(request 1\)$/m);
    expect(stdout).toMatch(/^ {6}0 {2}localhost {2}ec 256 \(prime256v1\), ecdsa-with-SHA256, expires \d{4}-\d\d-\d\d \(in \d+ days\)$/m);
    expect(stdout).toMatch(
      /^ {6}1 {2}expired chain intermediate {2}ec 256 \(prime256v1\), ecdsa-with-SHA256, expired 2021-01-01 \(\d+ days ago\) {2}<- expired$/m,
    );
    expect(stdout).toMatch(/^ {6}2 {2}sitediag chain root \(self-issued\) {2}ec 256 \(prime256v1\), ecdsa-with-SHA256, expires /m);
  });

  it("trace: the RSA intermediate and the warning of a leaf with 5 days left", async () => {
    const ports = { SITEDIAG_TRACE_PORTS: String(expiringSoon.httpsPort) };
    const { code, stdout } = await runDiagnose(traceCommand, [expiringSoon.url("/", { secure: true })], { ...env, ...ports });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ {6}1 {2}sitediag chain intermediate {2}rsa 2048, ecdsa-with-SHA256, expires /m);
    expect(stdout).toMatch(
      /^ {6}0 {2}localhost {2}ec 256 \(prime256v1\), sha256WithRSAEncryption, expires \d{4}-\d\d-\d\d \(in 5 days\)$/m,
    );
    expect(stdout).toMatch(
      /^ *warning +hop 1 +certificate_expires_soon +The certificate "localhost" of https:\/\/127\.0\.0\.1:\d+\/ expires in 5 days/m,
    );
  });
});
