import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HopOutcome, HopRequest, Prober } from "../../../src/probe/hop-types.js";
import { type HttpTargets, startHttpTargets } from "../../fixtures/http-targets.js";
import { getOcspFixture, startStaplingTarget } from "../../fixtures/ocsp-staples.js";
import { getTestPki, type KeyPair, type TestPki } from "../../fixtures/test-ca.js";
import { loopbackProber } from "../../fixtures/test-env.js";

// What of a handshake's certificates a hop reads (HopRequest.certificates,
// connector.ts): the verdict alone for is-site-down without details, the leaf
// and its staple by default, the whole chain with details. The verdict must
// be the same at every level; only what is kept of the session differs.

const run = promisify(execFile);
let pki: TestPki;
let prober: Prober;
const started: HttpTargets[] = [];

beforeAll(async () => {
  pki = await getTestPki();
  prober = loopbackProber({ ca: pki.caPem });
});
afterAll(async () => {
  await prober.close();
  for (const targets of started) await targets.close();
});

async function site(pair: KeyPair, chain = ""): Promise<URL> {
  const targets = await startHttpTargets({
    tls: { key: pair.key, cert: pair.cert + chain },
    routes: { "/": { kind: "respond", status: 200 } },
  });
  started.push(targets);
  return new URL(targets.url("/", { secure: true }));
}

const hop = (url: URL, more: Partial<HopRequest> = {}): Promise<HopOutcome> =>
  prober.hop({ url, method: "GET", timeoutMs: 5_000, ports: { kind: "fetch-safe" }, ...more });

describe("the verdict alone", () => {
  it("a verified site answers, and nothing of its session is kept", async () => {
    const url = await site(pki.valid);
    const outcome = await hop(url, { certificates: "verdict" });
    expect(outcome.kind).toBe("response");
    if (outcome.kind !== "response") return;
    expect(outcome.response.status).toBe(200);
    expect(outcome.response.tls).toBeNull();
    // The timings still have their TLS phase: the handshake happened.
    expect(outcome.response.timings.tlsMs).not.toBeNull();
  });

  it.each([
    ["expired", (p: TestPki) => [p.expired, ""] as const, "CERT_HAS_EXPIRED"],
    ["for another host", (p: TestPki) => [p.wrongHost, ""] as const, "ERR_TLS_CERT_ALTNAME_INVALID"],
    ["of an issuer nobody trusts", (p: TestPki) => [p.untrustedIssuer, ""] as const, "UNABLE_TO_VERIFY_LEAF_SIGNATURE"],
    // The one refinement that reads the chain: a leaf sent without its intermediate.
    ["sent without its intermediate", (p: TestPki) => [p.viaIntermediate, ""] as const, "CERT_CHAIN_INCOMPLETE"],
  ] as const)("a certificate %s fails with the code every level gives", async (_label, pick, code) => {
    const [pair, chain] = pick(pki);
    const url = await site(pair, chain);
    for (const certificates of ["verdict", "leaf"] as const) {
      const outcome = await hop(url, { certificates });
      expect(outcome.kind).toBe("failure");
      if (outcome.kind !== "failure") continue;
      expect(outcome.failure).toMatchObject({ stage: "tls", cause: code });
      expect(outcome.trace.tls === null).toBe(certificates === "verdict");
    }
  });

  it("a complete chain through an intermediate verifies at every level", async () => {
    const url = await site(pki.viaIntermediate, pki.intermediatePem);
    for (const more of [{ certificates: "verdict" as const }, {}, { captureHead: true }]) {
      const outcome = await hop(url, more);
      expect(outcome.kind).toBe("response");
    }
  });
});

describe("the leaf and its staple by default; the chain with details", () => {
  it("the leaf without details, every linked certificate with them", async () => {
    const url = await site(pki.viaIntermediate, pki.intermediatePem);
    const plain = await hop(url);
    const detailed = await hop(url, { captureHead: true });
    if (plain.kind !== "response" || detailed.kind !== "response") throw new Error("expected two responses");
    // Verified, nothing stapled: the leaf Node's name check read is all a hop without details reads, so the chain is not counted.
    expect(plain.response.tls).toMatchObject({
      verifyError: null,
      certificate: { subject: "localhost", chainLength: null },
      ocsp: { status: "none" },
      chain: [],
      verification: null,
    });
    expect(detailed.response.tls?.certificate).toEqual({ ...plain.response.tls?.certificate, chainLength: 2 });
    expect(detailed.response.tls?.chain.map((link) => link.subject)).toEqual([
      "localhost",
      "sitediag test intermediate",
      "sitediag test CA",
    ]);
  });

  it("with details too, the leaf is described once per thread: its record's names are shared and frozen", async () => {
    const url = await site(pki.viaIntermediate, pki.intermediatePem);
    const first = await hop(url, { captureHead: true });
    const again = await hop(url, { captureHead: true });
    const plain = await hop(url);
    if (first.kind !== "response" || again.kind !== "response" || plain.kind !== "response") throw new Error("expected three responses");
    const names = first.response.tls?.certificate?.subjectAltNames;
    expect(names).toContain("DNS:localhost");
    // One reading of the leaf's DER (tls-detail.ts): not a parse of it per hop, whatever the hop reads.
    expect(Object.isFrozen(names)).toBe(true);
    expect(again.response.tls?.certificate?.subjectAltNames).toBe(names);
    expect(plain.response.tls?.certificate?.subjectAltNames).toBe(names);
    // Each hop's record is its own object: the chain's count is the hop's.
    expect(again.response.tls?.certificate).not.toBe(first.response.tls?.certificate);
    expect(again.response.tls?.certificate?.chainLength).toBe(2);
  });

  it("a staple is read against the issuer the chain gives (verified), and not at all for the verdict", async () => {
    const fixture = await getOcspFixture();
    const target = await startStaplingTarget(fixture.revoked, fixture.answers.revoked);
    try {
      const url = new URL(target.url);
      const leaf = await hop(url);
      if (leaf.kind !== "response") throw new Error(`expected a response, got ${leaf.kind}`);
      expect(leaf.response.tls?.ocsp).toMatchObject({ status: "revoked", forLeaf: true, signature: "verified" });
      // A staple is checked against the leaf's issuer, which only the chain gives: read, and counted, for it.
      expect(leaf.response.tls?.certificate?.chainLength).toBeGreaterThanOrEqual(1);
      const verdict = await hop(url, { certificates: "verdict" });
      if (verdict.kind !== "response") throw new Error(`expected a response, got ${verdict.kind}`);
      expect(verdict.response.tls).toBeNull();
      // Asked for all the same: the handshake is the one a browser makes.
      expect(target.stapleRequests()).toBe(2);
    } finally {
      await target.close();
    }
  });
});

describe("the default trust store, one context for every connection", () => {
  it("without a CA file, Node's roots do not trust the test CA, hop after hop", async () => {
    const url = await site(pki.valid);
    const bare = loopbackProber();
    try {
      for (let round = 0; round < 3; round++) {
        const outcome = await bare.hop({ url, method: "GET", timeoutMs: 5_000, ports: { kind: "fetch-safe" }, certificates: "verdict" });
        expect(outcome.kind === "failure" ? outcome.failure.cause : outcome.kind).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
      }
    } finally {
      await bare.close();
    }
  });

  it("NODE_EXTRA_CA_CERTS is part of it, as a production host trusts a private CA", async () => {
    const url = await site(pki.valid);
    const dir = mkdtempSync(join(tmpdir(), "sitediag-extra-ca-"));
    try {
      writeFileSync(join(dir, "ca.pem"), pki.caPem);
      const script = [
        `import { createProber } from ${JSON.stringify(new URL("../../../src/probe/prober.ts", import.meta.url).pathname)};`,
        `const prober = createProber({ allowCidrs: ["127.0.0.0/8"], dnsServers: [], userAgent: "test" });`,
        `for (const certificates of ["verdict", "leaf"]) {`,
        `  const outcome = await prober.hop({ url: new URL(${JSON.stringify(url.href)}), method: "GET", timeoutMs: 5000, ports: { kind: "fetch-safe" }, certificates });`,
        `  console.log(outcome.kind === "response" ? outcome.response.status : outcome.kind === "failure" ? outcome.failure.cause : outcome.kind);`,
        `}`,
        `await prober.close();`,
      ].join("\n");
      const { stdout } = await run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, "ca.pem") },
        timeout: 60_000,
      });
      expect(stdout.trim().split("\n")).toEqual(["200", "200"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 70_000);
});
