import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { createTestEnv, runnerOf, type TestEnv } from "../fixtures/test-env.js";

// A name whose DNS server never answers, checked with the default 6 s: the
// resolver (c-ares) may give up on its own before then. Whichever limit ends
// it, the reason's time is the time the lookup had, never an allowance it
// did not reach (the issue saw "5031 ms ... Timed out after 6 s resolving").

describe("a timeout's reason", () => {
  let dns: DnsServer;
  let env: TestEnv;

  beforeAll(async () => {
    dns = await startDnsServer();
    dns.answer("silent.test", "never");
    env = createTestEnv({ dnsServers: [dns.server] });
  });

  afterAll(async () => {
    await env?.close();
    await dns?.close();
  });

  it("carries the time the lookup actually had", async () => {
    const outcome = await runnerOf(env).checkSite("http://silent.test/", undefined, { details: true });
    expect(outcome.kind).toBe("result");
    if (outcome.kind !== "result") return;
    const { result } = outcome;
    expect(result.failedStage).toBe("dns");
    const failure = result.details?.requests[0]?.failure;
    expect(failure?.timedOut).toBe(true);
    const said = /^Timed out after ([\d.]+) s resolving the host name(?: \(the resolver gave up before the 6 s allowed\))?$/.exec(
      result.reason ?? "",
    );
    expect(said, result.reason ?? "").not.toBeNull();
    // The time in words is the lookup's own, to the 0.1 s it is written in.
    expect(Math.abs(Number(said?.[1]) * 1_000 - (failure?.elapsedMs ?? 0))).toBeLessThanOrEqual(50);
  }, 20_000);
});
