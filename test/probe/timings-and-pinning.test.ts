import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAddressPolicy } from "../../src/probe/policy/address-policy.js";
import { ConnectorError, openPinned } from "../../src/probe/connect/connector.js";
import { startTrace } from "../../src/probe/hop-trace.js";
import type { Prober } from "../../src/probe/hop-types.js";
import { createProber } from "../../src/probe/prober.js";
import { USER_AGENT } from "../../src/package-info.js";
import { startRawTarget, type RawTarget } from "../fixtures/raw-targets.js";
import { watchLoopLag } from "../fixtures/loop-lag.js";

let prober: Prober;
let slow: RawTarget;
const DELAY_MS = 300;

beforeAll(async () => {
  slow = await startRawTarget({ kind: "delayed", delayMs: DELAY_MS });
  prober = createProber({ allowCidrs: ["127.0.0.0/8"], dnsServers: [], userAgent: USER_AGENT });
});

afterAll(async () => {
  await prober.close();
  await slow.close();
});

describe("timings", () => {
  it("a target that waits a known delay is reported within a few ms of it", async () => {
    // The target and the prober share this thread: a busy loop delays the answer and its reading alike, by as
    // much as its worst lateness while the hop ran, which the bounds above the delay allow for (measured).
    const lag = watchLoopLag();
    const outcome = await prober.hop({ url: new URL(slow.url), method: "GET", timeoutMs: 3_000, ports: { kind: "fetch-safe" } });
    lag.stop();
    if (outcome.kind !== "response") throw new Error(JSON.stringify(outcome));
    const { timings } = outcome.response;
    expect(timings.firstByteMs).toBeGreaterThanOrEqual(DELAY_MS - 2);
    expect(timings.firstByteMs).toBeLessThan(DELAY_MS + 40 + lag.maxMs());
    expect(timings.totalMs).toBeGreaterThanOrEqual(timings.firstByteMs ?? Number.POSITIVE_INFINITY);
    expect(timings.totalMs).toBeLessThan(DELAY_MS + 80 + lag.maxMs());
    expect(timings.dnsMs).toBeNull();
    expect(timings.tlsMs).toBeNull();
    expect(timings.connectMs).toBeGreaterThanOrEqual(0);
  });

  it("every hop opens its own connection (no pool shared between hops)", async () => {
    const before = slow.connections();
    for (let i = 0; i < 2; i++)
      await prober.hop({ url: new URL(slow.url), method: "HEAD", timeoutMs: 3_000, ports: { kind: "fetch-safe" } });
    expect(slow.connections() - before).toBe(2);
  });
});

describe("the connector's last tripwire", () => {
  it("drops a connection whose peer the policy does not allow, before a byte of request is written", async () => {
    const target = await startRawTarget({ kind: "silent" });
    const trace = startTrace(performance.now());
    const error = await openPinned(
      { addresses: [{ address: "127.0.0.1", family: 4 }], port: target.port, tls: false, hostname: "127.0.0.1", secureContext: undefined },
      trace,
      createAddressPolicy([]), // loopback not allowed: the peer check must refuse it
      new AbortController().signal,
    ).then(
      () => null,
      (reason: unknown) => reason,
    );
    await target.close();
    expect(error).toBeInstanceOf(ConnectorError);
    expect((error as ConnectorError).code).toBe("REMOTE_ADDRESS_MISMATCH");
    expect(trace.phase).toBe("connect");
    expect(trace.requestSentAt).toBeNull();
  });
});
