import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticEnv } from "../../src/diagnostics/diagnostic-call.js";
import { MAX_URL_LENGTH } from "../../src/shared/limits.js";
import type { Prober } from "../../src/probe/hop-types.js";
import { closedLoopbackPort } from "../fixtures/http-targets.js";
import { startTraceTarget, type TraceTarget } from "../fixtures/trace-targets.js";
import { traceEnv, traceResult, loopbackProber, traceRedirects, REPORTED } from "../fixtures/test-env.js";

let site: TraceTarget;
let prober: Prober;
let env: DiagnosticEnv;

beforeAll(async () => {
  site = await startTraceTarget();
  prober = loopbackProber();
  // 80 and 443 are allowed too, so the refusals below are by address, not by port.
  env = traceEnv(prober, { tracePorts: [site.port, 80, 443] });
});

afterAll(async () => {
  await prober.close();
  await site.close();
});

const trace = (input: string, traceEnvironment = env) => traceResult(input, traceEnvironment);
/** As the CLI asks: details with every request's report facts. */
const reported = (input: string) => traceResult(input, env, REPORTED);

async function refusalRule(input: string): Promise<string> {
  const outcome = await traceRedirects(input, env);
  if (outcome.kind !== "refused") throw new Error(`expected a refusal, got ${JSON.stringify(outcome)}`);
  expect(outcome.refusal.reason).not.toBe("");
  return outcome.refusal.rule;
}

describe("starting input", () => {
  it("refuses unusable starting input, naming the rule", async () => {
    expect(await refusalRule("")).toBe("invalid_url");
    expect(await refusalRule("http://[::1")).toBe("invalid_url");
    expect(await refusalRule(`http://127.0.0.1:${site.port}/${"a".repeat(MAX_URL_LENGTH)}`)).toBe("url_too_long");
    expect(await refusalRule(`ftp://127.0.0.1:${site.port}/`)).toBe("scheme");
    expect(await refusalRule(`http://user:secret@127.0.0.1:${site.port}/`)).toBe("credentials");
    expect(await refusalRule(`http://127.0.0.1:${site.port + 1}/`)).toBe("port");
    expect(await refusalRule("http://10.0.0.1/")).toBe("non_public_address");
    expect(await refusalRule("http://169.254.169.254/latest/meta-data/")).toBe("non_public_address");
    expect(site.requests).toEqual([]);
  });

  it("starts a bare host at https://", async () => {
    // Nothing speaks TLS on this plain-HTTP port, so the point is the URL tried, not the answer.
    const result = await trace(`127.0.0.1:${site.port}/path?q=1`);
    expect(result.input).toBe(`127.0.0.1:${site.port}/path?q=1`);
    expect(result.finalUrl).toBe(`https://127.0.0.1:${site.port}/path?q=1`);
    expect(result.chainStatus).toBe("request_failed");
  });

  it("answers Request failed with an empty chain when the first request cannot connect", async () => {
    const port = await closedLoopbackPort();
    const url = `http://127.0.0.1:${port}/`;
    const result = await trace(url, { ...env, tracePorts: [port] });
    expect(result).toMatchObject({ chainStatus: "request_failed", redirects: 0, chain: [], finalUrl: url, finalStatus: null });
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatchObject({ code: "connect_failed", hop: null });
    expect(result.warnings[0]?.message).toMatch(new RegExp(`^HEAD ${url} failed at the connect stage: `));
  });
});

describe("redirects to refused targets", () => {
  it.each([
    ["http://10.0.0.1/", { cidr: "10.0.0.0/8", name: "Private-Use", rfc: "RFC 1918" }],
    ["http://169.254.169.254/latest/meta-data/", { cidr: "169.254.0.0/16", name: "Link Local", rfc: "RFC 3927" }],
    ["http://[fd00::]/", { cidr: "fc00::/7", name: "Unique-Local", rfc: "RFC 4193" }],
  ] as const)("the refused request to %s names the address-table row that refused it", async (target, range) => {
    site.route("/to-range", { kind: "redirect", status: 302, location: target });
    const result = await reported(site.url("/to-range"));
    expect(result.details?.requests.at(-1)).toMatchObject({
      url: target,
      report: { kind: "stopped", refusal: { rule: "non_public_address", range } },
    });
  });

  it("the caller's own private literal is refused with its code and range", async () => {
    const outcome = await traceRedirects("http://10.0.0.1/", env);
    expect(outcome).toMatchObject({ kind: "refused", refusal: { code: "input_non_public_address", range: { cidr: "10.0.0.0/8" } } });
  });

  it.each(["http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://[fd00::1]/"])(
    "does not follow a redirect to %s",
    async (target) => {
      site.route("/to-private", { kind: "redirect", status: 302, location: target });
      const result = await trace(site.url("/to-private"));
      expect(result).toMatchObject({ chainStatus: "request_failed", redirects: 1, finalUrl: target, finalStatus: null });
      expect(result.chain).toHaveLength(1);
      const refused = result.warnings.find((warning) => warning.code === "redirect_target_refused");
      expect(refused?.hop).toBe(1);
      expect(refused?.message).toContain(`Hop 1 redirects to ${target}, which is not followed: `);
    },
  );

  it("sends no packet to a loopback address outside the allowed ranges", async () => {
    const forbidden = await startTraceTarget({ host: "127.0.0.2" });
    const narrowProber = loopbackProber({ allowCidrs: ["127.0.0.1/32"] });
    // Made inside the test, after the setup's wait: on probe threads its boot would count against the trace's 1.5 s budget.
    await narrowProber.ready?.();
    try {
      site.route("/to-127-0-0-2", { kind: "redirect", status: 301, location: forbidden.url("/") });
      const narrowEnv = traceEnv(narrowProber, { tracePorts: [site.port, forbidden.port] });
      const result = await trace(site.url("/to-127-0-0-2"), narrowEnv);
      expect(result).toMatchObject({ chainStatus: "request_failed", redirects: 1, finalUrl: forbidden.url("/") });
      expect(result.warnings.map((warning) => warning.code)).toContain("redirect_target_refused");
      expect(forbidden.connections()).toBe(0);
      // The same address is refused as a starting input: a 400, still without a packet.
      const start = await traceRedirects(forbidden.url("/"), narrowEnv);
      expect(start).toMatchObject({ kind: "refused", refusal: { rule: "non_public_address" } });
      expect(forbidden.connections()).toBe(0);
    } finally {
      await narrowProber.close();
      await forbidden.close();
    }
  });

  it("sends no packet to a port outside SITEDIAG_TRACE_PORTS", async () => {
    const otherPort = await startTraceTarget();
    try {
      site.route("/to-other-port", { kind: "redirect", status: 301, location: otherPort.url("/") });
      const result = await trace(site.url("/to-other-port"));
      expect(result).toMatchObject({ chainStatus: "request_failed", finalUrl: otherPort.url("/") });
      expect(result.warnings.map((warning) => warning.code)).toContain("redirect_target_refused");
      expect(otherPort.connections()).toBe(0);
    } finally {
      await otherPort.close();
    }
  });
});
