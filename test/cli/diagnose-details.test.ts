import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/check.js";
import { traceCommand } from "../../src/cli/trace.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { withoutClock } from "../fixtures/clock-free.js";
import { startTestService } from "../fixtures/service-harness.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { escapeRegExp, runDiagnose } from "../fixtures/cli-io.js";

const ENV = { SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8,::1/128" };

let targets: HttpTargets;
let expired: HttpTargets;

beforeAll(async () => {
  const pki = await getTestPki();
  targets = await startHttpTargets({
    routes: {
      "/old": { kind: "redirect", status: 301, location: "/page" },
      "/page": {
        kind: "respond",
        status: 200,
        headers: { "content-type": "text/html" },
        body: '<meta http-equiv="refresh" content="2; url=/next">',
      },
      "/challenge": { kind: "respond", status: 403, headers: { "cf-ray": "1-AMS", "cf-mitigated": "challenge" } },
    },
  });
  expired = await startHttpTargets({ tls: pki.expired, routes: { "/": { kind: "respond", status: 200 } } });
});

afterAll(async () => {
  await targets?.close();
  await expired?.close();
});

const check = (argv: readonly string[]) => runDiagnose(checkCommand, argv, ENV);
const trace = (argv: readonly string[], env: Record<string, string> = {}) => runDiagnose(traceCommand, argv, { ...ENV, ...env });

describe("sitediag check shows details", () => {
  it("the client-side redirect, reported and not followed", async () => {
    const { code, stdout } = await check([targets.url("/old")]);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(`^ {2}client redirect +meta refresh to ${escapeRegExp(targets.url("/next"))} after 2 s \\(not followed\\)$`, "m"),
    );
    expect(stdout).not.toMatch(/^ {2}code /m);
  });

  it("the proxy and what its answer means", async () => {
    const { stdout } = await check([targets.url("/challenge")]);
    expect(stdout).toMatch(/^ {2}proxy +Reachable, but a Cloudflare challenge answered: a browser may pass it; automated clients won't$/m);
  });

  it("a certificate that failed verification, with its expiry and the code", async () => {
    const { code, stdout } = await check([`https://127.0.0.1:${expired.httpsPort}/`]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^ {2}code +tls_certificate_expired$/m);
    expect(stdout).toMatch(
      /^ {2}certificate +CN=localhost, issuer .+, (?:TLSv1\.[23]|TLS not completed), expired 2021-01-01 \(\d+ days ago\), chain of 1, not trusted: CERT_HAS_EXPIRED +\(request 1\)$/m,
    );
    expect(expired.requests).toEqual([]);
  });

  it("--json --details prints the data object of the API with details=true", async () => {
    const service = await startTestService();
    try {
      const url = targets.url("/old");
      const cli = await check(["--json", "--details", url]);
      const response = await fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(url)}&details=true`);
      const api = ((await response.json()) as { data: Record<string, unknown> }).data;
      const fromCli = JSON.parse(cli.stdout) as Record<string, unknown>;
      expect(Object.keys(fromCli)).toEqual(Object.keys(api));
      // Two calls measured apart: equal but for what the clock decides (durations, the target's Date). Both answers
      // whole in the message: a difference seen once on a loaded machine could not be told from its diff alone.
      expect(withoutClock(fromCli), JSON.stringify({ cli: fromCli, api })).toEqual(withoutClock(api));
      expect(fromCli["details"]).toMatchObject({ clientRedirect: { kind: "meta_refresh" } });
    } finally {
      await service.close();
    }
  });
});

describe("sitediag trace shows details", () => {
  it("the client-side redirect of the final page, with its warning; the extra GET is no chain position", async () => {
    const { code, stdout } = await trace([targets.url("/old")], { SITEDIAG_TRACE_PORTS: String(targets.httpPort) });
    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(`^ {2}client redirect +meta refresh to ${escapeRegExp(targets.url("/next"))} after 2 s \\(not followed\\)$`, "m"),
    );
    expect(stdout).toMatch(/^ {2}warning +hop 2 +client_side_redirect_not_followed +/m);
    expect(stdout).toMatch(new RegExp(`^ {2}2 +200 OK +HEAD +127\\.0\\.0\\.1 .+ ${escapeRegExp(targets.url("/page"))}$`, "m"));
    expect(stdout).not.toMatch(/^ {2}3 /m);
  });

  it("--json without --details stays the plain answer: no details, no extra request", async () => {
    const before = targets.requests.length;
    const { stdout } = await trace(["--json", targets.url("/old")], { SITEDIAG_TRACE_PORTS: String(targets.httpPort) });
    const data = JSON.parse(stdout) as Record<string, unknown>;
    expect("details" in data).toBe(false);
    expect(data["warnings"]).toEqual([]);
    expect(targets.requests.slice(before).map((request) => request.method)).toEqual(["HEAD", "HEAD"]);
  });

  it("--json --details adds details", async () => {
    const { stdout } = await trace(["--json", "--details", targets.url("/old")], { SITEDIAG_TRACE_PORTS: String(targets.httpPort) });
    const data = JSON.parse(stdout) as { details?: { requests: unknown[] } };
    expect(data.details?.requests).toHaveLength(3);
  });
});
