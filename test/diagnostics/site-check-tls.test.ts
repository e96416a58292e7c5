import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SiteCheckResult } from "../../src/diagnostics/site-check-result.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type KeyPair, getTestPki } from "../fixtures/test-ca.js";
import { type TestEnv, createTestEnv, checkedResult } from "../fixtures/test-env.js";

const OK = { kind: "respond", status: 200 } as const;

let env: TestEnv;
let servers: Readonly<Record<"valid" | "expired" | "selfSigned" | "wrongHost", HttpTargets>>;

beforeAll(async () => {
  const pki = await getTestPki();
  env = createTestEnv({ ca: pki.caPem, siteTimeoutMs: 2_000 });
  const start = (tls: KeyPair) => startHttpTargets({ tls, routes: { "/": OK } });
  servers = {
    valid: await start(pki.valid),
    expired: await start(pki.expired),
    selfSigned: await start(pki.selfSigned),
    wrongHost: await start(pki.wrongHost),
  };
});

afterAll(async () => {
  await env.close();
  await Promise.all(Object.values(servers).map((server) => server.close()));
});

function check(raw: string): Promise<SiteCheckResult> {
  return checkedResult(raw, env);
}

describe("site check over HTTPS", () => {
  it("a valid certificate from a trusted CA is up", async () => {
    const url = servers.valid.url("/", { secure: true });
    expect(await check(url)).toMatchObject({ status: "up", statusCode: 200, finalUrl: url, failedStage: null });
  });

  it.each([
    ["expired", "TLS certificate has expired"],
    ["selfSigned", "TLS certificate is self-signed"],
    ["wrongHost", "TLS certificate does not match the host name"],
  ] as const)("a certificate that is %s is down at the tls stage", async (kind, reason) => {
    const result = await check(servers[kind].url("/", { secure: true }));
    expect(result).toMatchObject({
      finalUrl: null,
      status: "down",
      statusCode: null,
      statusText: null,
      responseTime: null,
      reason,
      failedStage: "tls",
      redirectHops: null,
    });
  });

  it("an https URL to a plain HTTP port fails the TLS handshake", async () => {
    const url = `https://127.0.0.1:${servers.valid.httpPort}/`;
    const result = await check(url);
    expect(result).toMatchObject({ status: "down", failedStage: "tls", finalUrl: null });
    expect(result.reason).toMatch(/^TLS handshake failed/);
  });

  it("follows an upgrade from http to https", async () => {
    servers.valid.route("/plain", { kind: "redirect", status: 301, location: servers.valid.url("/", { secure: true }) });
    const result = await check(servers.valid.url("/plain"));
    expect(result).toMatchObject({
      status: "up",
      finalUrl: servers.valid.url("/", { secure: true }),
      redirectHops: [{ url: servers.valid.url("/plain"), status: 301 }],
    });
  });

  it("a TLS failure after a redirect names the https URL and keeps the redirect", async () => {
    const expiredUrl = servers.expired.url("/", { secure: true });
    servers.valid.route("/to-expired", { kind: "redirect", status: 302, location: expiredUrl });
    const result = await check(servers.valid.url("/to-expired"));
    expect(result).toMatchObject({
      finalUrl: expiredUrl,
      status: "down",
      statusCode: null,
      reason: "TLS certificate has expired",
      failedStage: "tls",
      redirectHops: [{ url: servers.valid.url("/to-expired"), status: 302 }],
    });
    expect(Number.isInteger(result.responseTime)).toBe(true);
  });
});
