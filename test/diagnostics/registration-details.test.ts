import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { DiagnosticEnv } from "../../src/diagnostics/diagnostic-call.js";
import type { Prober } from "../../src/probe/hop-types.js";
import { clearRegistrationCache } from "../../src/registration/registration-lookup.js";
import { startDnsServer, type DnsServer } from "../fixtures/dns-server.js";
import { startHttpTargets, type HttpTargets } from "../fixtures/http-targets.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { startTraceTarget, type TraceTarget } from "../fixtures/trace-targets.js";
import { checkedResult, loopbackProber, traceEnv, traceResult } from "../fixtures/test-env.js";
import { rdapDomain } from "../fixtures/rdap-answers.js";
import type { SiteCheckResult } from "../../src/diagnostics/site-check-result.js";
import type { RedirectTraceResult } from "../../src/diagnostics/redirect-trace-result.js";

// details.registration and its warnings through both diagnostics (and the probe thread's bridge, threaded).
let dns: DnsServer;
let target: TraceTarget;
let rdap: HttpTargets;
let prober: Prober;
let env: DiagnosticEnv;
let dir: string;

beforeAll(async () => {
  const pki = await getTestPki();
  dns = await startDnsServer();
  target = await startTraceTarget();
  rdap = await startHttpTargets({ tls: pki.valid });
  dir = mkdtempSync(join(tmpdir(), "sitediag-rdap-details-"));
  const bootstrap = join(dir, "dns.json");
  writeFileSync(bootstrap, JSON.stringify({ services: [[["test"], [rdap.url("/rdap/", { secure: true })]]] }));
  prober = loopbackProber({ dnsServers: [dns.server], ca: pki.caPem });
  env = {
    ...traceEnv(prober, { tracePorts: [target.port], siteTimeoutMs: 5_000, traceHopTimeoutMs: 3_000, traceTotalTimeoutMs: 10_000 }),
    rdapBootstrapFile: bootstrap,
    domainExpiryWarnDays: 30,
  };
  rdap.route("/rdap/domain/soon.test", { kind: "respond", status: 200, body: rdapDomain("soon.test") });
  rdap.route("/rdap/domain/held.test", { kind: "respond", status: 200, body: rdapDomain("held.test", { status: ["client hold"] }) });
  dns.answer("www.soon.test", { a: ["127.0.0.1"] });
  dns.answer("www.held.test", { a: ["127.0.0.1"] });
  target.route("/ok", { kind: "status", status: 200 });
});

afterAll(async () => {
  await prober.close();
  await Promise.all([target.close(), dns.close(), rdap.close()]);
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => clearRegistrationCache());

const at = (host: string, path: string) => `http://${host}:${target.port}${path}`;

/**
 * A diagnostic waits at most 250 ms past its end for the registry; on a busy
 * machine the first one may end first ("unfinished"). Its lookup goes on and
 * fills the cache, so the next diagnostic of the domain has the answer: asked
 * again until it does (a few times at most).
 */
async function settled<T extends SiteCheckResult | RedirectTraceResult>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const result = await run();
    const registration = result.details?.registration;
    if (registration?.state !== "unknown" || registration.unknownReason !== "unfinished" || attempt === 10) return result;
    await new Promise((wait) => setTimeout(wait, 200));
  }
}
const asked = () => rdap.requests.length;

describe("is-site-down", () => {
  it("expiring in 10 days: details.registration and a domain_expires_soon warning; the verdict unchanged", async () => {
    const result = await settled(() => checkedResult(at("www.soon.test", "/ok"), env, { details: true }));
    expect(result).toMatchObject({ status: "up", statusCode: 200 });
    expect(result.details?.registration).toMatchObject({
      domain: "soon.test",
      state: "found",
      registrar: "Example Registrar, Inc.",
      suspended: false,
    });
    expect(result.details?.warnings.map(({ code, severity }) => [code, severity])).toEqual([["domain_expires_soon", "warning"]]);
  });

  it("without details: no registration, nothing asked of the registry", async () => {
    const before = asked();
    const result = await checkedResult(at("www.soon.test", "/ok"), env);
    expect(result.details).toBeUndefined();
    expect(asked()).toBe(before);
  });

  it("a refused input asks nothing of the registry either", async () => {
    const before = asked();
    const outcome = await import("../../src/diagnostics/site-check.js").then(({ checkSite }) =>
      checkSite("http://www.soon.test:1/", env, undefined, { details: true }),
    );
    expect(outcome.kind).toBe("refused");
    expect(asked()).toBe(before);
  });
});

describe("redirect-check", () => {
  it("on hold: domain_on_hold, a problem, in its warnings and in details", async () => {
    const result = await settled(() => traceResult(at("www.held.test", "/ok"), env, { details: true }));
    expect(result.details?.registration).toMatchObject({ domain: "held.test", state: "found", suspended: true, status: ["client hold"] });
    expect(result.warnings.filter(({ code }) => code.startsWith("domain_")).map(({ code, severity }) => [code, severity])).toEqual([
      ["domain_on_hold", "problem"],
      ["domain_expires_soon", "warning"],
    ]);
    expect(result.details?.warnings.map(({ code }) => code)).toEqual(["domain_on_hold", "domain_expires_soon"]);
  });
});
