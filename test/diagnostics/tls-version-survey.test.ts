import { once } from "node:events";
import { createServer, type Server } from "node:https";
import { createSecureServer } from "node:http2";
import type { AddressInfo } from "node:net";
import type { SecureVersion } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticDetails } from "../../src/diagnostics/diagnostic-details.js";
import type { TlsVersionSurvey } from "../../src/diagnostics/tls-version-survey.js";
import { closedLoopbackPort } from "../fixtures/http-targets.js";
import { getTestPki, type TestPki } from "../fixtures/test-ca.js";
import { checkedResult, createTestEnv, type TestEnv, traceEnv, traceResult } from "../fixtures/test-env.js";

/**
 * TLS versions of an https first host: loopback HTTPS servers limited to
 * versions as each test says (the test CA's leaf names 127.0.0.1). Each
 * counts the handshakes it completed and the requests it read, so a test
 * can say that a version's handshake wrote nothing after it.
 */
const SITE_TIMEOUT_MS = 2_000;

interface Target {
  readonly url: string;
  readonly handshakes: () => number;
  readonly requests: () => number;
  readonly server: Server | ReturnType<typeof createSecureServer>;
}

let pki: TestPki;
let env: TestEnv;
const started: Target[] = [];

beforeAll(async () => {
  pki = await getTestPki();
  env = createTestEnv({ ca: pki.caPem, siteTimeoutMs: SITE_TIMEOUT_MS });
});

afterAll(async () => {
  await env.close();
  await Promise.all(started.map(({ server }) => new Promise((resolve) => server.close(resolve))));
});

async function target(minVersion: SecureVersion, maxVersion: SecureVersion, h2 = false): Promise<Target> {
  const counts = { handshakes: 0, requests: 0 };
  // Security level 0, so the server itself can speak TLS 1.0 and 1.1 when a test allows them.
  const options = { key: pki.valid.key, cert: pki.valid.cert, minVersion, maxVersion, ciphers: "DEFAULT@SECLEVEL=0" };
  const server = h2 ? createSecureServer({ ...options, allowHTTP1: true }) : createServer(options);
  server.on("secureConnection", () => (counts.handshakes += 1));
  server.on("request", (_request: unknown, response: { writeHead: (status: number) => { end: (body: string) => void } }) => {
    counts.requests += 1;
    response.writeHead(200).end("ok");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const made: Target = {
    url: `https://127.0.0.1:${String((server.address() as AddressInfo).port)}/`,
    handshakes: () => counts.handshakes,
    requests: () => counts.requests,
    server,
  };
  started.push(made);
  return made;
}

async function surveyOf(url: string): Promise<{ details: DiagnosticDetails; survey: TlsVersionSurvey }> {
  const result = await checkedResult(url, env, { details: true });
  expect([result.status, result.statusCode]).toEqual(["up", 200]);
  const details = result.details as DiagnosticDetails;
  if (details.tlsVersions === null) throw new Error("no TLS versions");
  return { details, survey: details.tlsVersions };
}

function outcomes(survey: TlsVersionSurvey): [string, string][] {
  return survey.attempts.map(({ version, outcome }) => [version, outcome]);
}

describe("is-site-down with details, an https first host", () => {
  it("a server of TLS 1.2 only: 1.2 accepted, the others refused, tls13_not_supported (info); nothing sent after a handshake", async () => {
    const only12 = await target("TLSv1.2", "TLSv1.2");
    const { details, survey } = await surveyOf(only12.url);
    expect(outcomes(survey)).toEqual([
      ["TLSv1.3", "refused"],
      ["TLSv1.2", "accepted"],
      ["TLSv1.1", "refused"],
      ["TLSv1", "refused"],
    ]);
    expect(survey.address).toBe("127.0.0.1");
    const refused = survey.attempts[0];
    expect(refused?.code).toMatch(/^tls_/);
    expect(refused?.cause).toMatch(/^ERR_SSL_/);
    expect(survey.attempts[1]).toMatchObject({ cipher: expect.any(String) as string, code: null, reason: null });
    expect(survey.attempts[1]?.tlsMs).toBeGreaterThanOrEqual(0);
    expect(details.warnings.map(({ code, severity }) => [code, severity])).toEqual([["tls13_not_supported", "info"]]);
    // The first request's handshake and the 1.2 one completed; only the first request was read.
    expect([only12.handshakes(), only12.requests()]).toEqual([2, 1]);
  });

  it("a server that still speaks TLS 1.0 and 1.1: every version accepted, legacy_tls_accepted names both", async () => {
    const legacy = await target("TLSv1", "TLSv1.3");
    const { details, survey } = await surveyOf(legacy.url);
    expect(outcomes(survey)).toEqual([
      ["TLSv1.3", "accepted"],
      ["TLSv1.2", "accepted"],
      ["TLSv1.1", "accepted"],
      ["TLSv1", "accepted"],
    ]);
    const warning = details.warnings.find(({ code }) => code === "legacy_tls_accepted");
    expect(warning).toMatchObject({ severity: "warning", hop: 1 });
    expect(warning?.message).toContain("TLS 1.1 and TLS 1.0");
    expect(details.warnings.some(({ code }) => code === "tls13_not_supported")).toBe(false);
    // The server sees TLS 1.2, 1.1 and 1.0 complete before the client does; TLS 1.3's may be cut first (the client has its answer).
    expect(legacy.handshakes()).toBeGreaterThanOrEqual(4);
    expect(legacy.requests()).toBe(1);
  });

  it("says whether the server chose h2 in ALPN", async () => {
    const h2 = await target("TLSv1.2", "TLSv1.3", true);
    const { survey } = await surveyOf(h2.url);
    expect(survey.h2).toBe(true);
    expect(survey.attempts.filter(({ outcome }) => outcome === "accepted").map(({ alpn }) => alpn)).toEqual(["h2", "h2"]);
    const plain = await target("TLSv1.2", "TLSv1.3");
    expect((await surveyOf(plain.url)).survey.h2).toBe(false);
  });

  it("makes no handshake more without details", async () => {
    const only12 = await target("TLSv1.2", "TLSv1.2");
    const result = await checkedResult(only12.url, env);
    expect(result.details).toBeUndefined();
    expect([only12.handshakes(), only12.requests()]).toEqual([1, 1]);
  });

  it("tries no version when the first request never connected", async () => {
    const port = await closedLoopbackPort();
    const result = await checkedResult(`https://127.0.0.1:${String(port)}/`, env, { details: true });
    expect([result.status, result.failedStage]).toEqual(["down", "connect"]);
    expect(result.details?.tlsVersions).toBeNull();
  });

  it("has no TLS versions for an http first host", async () => {
    const http = await import("node:http");
    const server = http.createServer((_request, response) => response.end("ok"));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const result = await checkedResult(`http://127.0.0.1:${String((server.address() as AddressInfo).port)}/`, env, { details: true });
      expect(result.details?.tlsVersions).toBeNull();
    } finally {
      server.close();
    }
  });
});

describe("redirect-check with details, an https first host", () => {
  it("lists tls13_not_supported in its warnings too", async () => {
    const only12 = await target("TLSv1.2", "TLSv1.2");
    const port = Number(new URL(only12.url).port);
    const result = await traceResult(
      only12.url,
      traceEnv(env.prober, { tracePorts: [port], traceHopTimeoutMs: SITE_TIMEOUT_MS, traceTotalTimeoutMs: 5_000 }),
      { details: true },
    );
    expect(result.details?.tlsVersions?.attempts.map(({ outcome }) => outcome)).toEqual(["refused", "accepted", "refused", "refused"]);
    expect(result.warnings.filter(({ code }) => code === "tls13_not_supported")).toHaveLength(1);
  });
});
