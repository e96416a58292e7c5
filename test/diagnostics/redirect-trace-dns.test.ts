import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { traceRedirects } from "../../src/diagnostics/redirect-trace.js";
import type { DiagnosticEnv } from "../../src/diagnostics/diagnostic-call.js";
import type { Prober } from "../../src/probe/hop-types.js";
import { startDnsServer, type DnsServer } from "../fixtures/dns-server.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { startTraceTarget, type TraceTarget } from "../fixtures/trace-targets.js";
import { traceEnv, traceResult, loopbackProber, REPORTED } from "../fixtures/test-env.js";

let dns: DnsServer;
let plain: TraceTarget;
let secure: TraceTarget;
let prober: Prober;
let env: DiagnosticEnv;

beforeAll(async () => {
  const pki = await getTestPki();
  dns = await startDnsServer();
  dns.answer("localhost", { a: ["127.0.0.1"] });
  dns.answer("site.test", { a: ["127.0.0.1"] });
  dns.answer("internal.test", { a: ["10.0.0.1"] });
  dns.answer("metadata.test", { a: ["169.254.169.254"] });
  dns.answer("gone.test", "nxdomain");
  plain = await startTraceTarget();
  secure = await startTraceTarget({ tls: pki.valid });
  prober = loopbackProber({ dnsServers: [dns.server], ca: pki.caPem });
  env = traceEnv(prober, { tracePorts: [plain.port, secure.port] });
});

afterAll(async () => {
  await prober.close();
  await Promise.all([plain.close(), secure.close(), dns.close()]);
});

const trace = (input: string) => traceResult(input, env);
/** As the CLI asks: details with every request's report facts. */
const reported = (input: string) => traceResult(input, env, REPORTED);

describe("names", () => {
  it("starts a bare domain at https and follows it by name", async () => {
    secure.route("/path?q=1", { kind: "status", status: 200 });
    const input = `localhost:${secure.port}/path?q=1`;
    const result = await trace(input);
    expect(result).toMatchObject({
      input,
      chainStatus: "healthy",
      finalUrl: `https://localhost:${secure.port}/path?q=1`,
      finalStatus: 200,
    });
    expect(result.chain[0]?.hostname).toBe("localhost");
  });

  it("answers Request failed with an empty chain when the first host does not resolve", async () => {
    const url = `http://gone.test:${plain.port}/`;
    const result = await trace(url);
    expect(result).toMatchObject({ chainStatus: "request_failed", chain: [], redirects: 0, finalUrl: url, finalStatus: null });
    expect(result.warnings.map((warning) => [warning.code, warning.hop])).toEqual([["dns_failed", null]]);
  });

  it("keeps the partial chain when a redirect names a host that does not resolve", async () => {
    plain.route("/to-gone", { kind: "redirect", status: 301, location: `http://gone.test:${plain.port}/x` });
    const result = await trace(plain.url("/to-gone"));
    expect(result).toMatchObject({ chainStatus: "request_failed", redirects: 1, finalUrl: `http://gone.test:${plain.port}/x` });
    expect(result.chain).toHaveLength(1);
    expect(result.warnings.map((warning) => warning.code)).toEqual(["host_changed", "dns_failed"]);
  });

  it("refuses a starting name that resolves to a private address, as input", async () => {
    const outcome = await traceRedirects(`http://internal.test:${plain.port}/`, env);
    expect(outcome).toMatchObject({
      kind: "refused",
      refusal: {
        rule: "non_public_address",
        code: "input_resolves_non_public",
        range: { cidr: "10.0.0.0/8", name: "Private-Use", rfc: "RFC 1918" },
      },
    });
  });

  it("does not follow a redirect to a name that resolves to the metadata address", async () => {
    plain.route("/to-metadata", { kind: "redirect", status: 302, location: `http://metadata.test:${plain.port}/latest/` });
    const result = await reported(plain.url("/to-metadata"));
    expect(result).toMatchObject({ chainStatus: "request_failed", redirects: 1, finalUrl: `http://metadata.test:${plain.port}/latest/` });
    const refused = result.warnings.at(-1);
    expect(refused).toMatchObject({ code: "redirect_target_refused", hop: 1 });
    expect(refused?.message).toContain("169.254.169.254");
    expect(result.details?.requests.at(-1)?.report).toMatchObject({
      kind: "stopped",
      refusal: { code: "input_resolves_non_public", range: { cidr: "169.254.0.0/16", name: "Link Local", rfc: "RFC 3927" } },
    });
  });
});
