import { connect } from "node:net";
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAddressPolicy } from "../../src/probe/policy/address-policy.js";
import { createDeadline, now } from "../../src/probe/clock.js";
import { defectLine, type HopDefect } from "../../src/probe/defect-log.js";
import { failureCode } from "../../src/shared/failures.js";
import { exchangeHttp1 } from "../../src/probe/http/http1-exchange.js";
import { type HopDeps, runHop } from "../../src/probe/hop.js";
import { startTrace } from "../../src/probe/hop-trace.js";
import type { HopOutcome, HopRequest } from "../../src/probe/hop-types.js";
import { createConnectionKeeper } from "../../src/probe/http/kept-connections.js";
import { InternalProbeError } from "../../src/probe/failure.js";
import { createResolver } from "../../src/probe/resolver.js";
import { closedLoopbackPort, type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { LOOPBACK_CIDRS } from "../fixtures/test-env.js";

/**
 * One boundary per hop: a throw of ours anywhere in a hop (here: keeping the
 * connection after the answer, and a socket listener) ends that hop as
 * internal_probe_error, logged once with the target's host, and a hop running
 * beside it is answered as if nothing happened. Real loopback targets; the
 * defect is a keeper of ours that throws, as a bug in it would.
 */
let targets: HttpTargets;

beforeAll(async () => {
  targets = await startHttpTargets({
    routes: {
      "/moved": { kind: "redirect", status: 301, location: "/here" },
      "/here": { kind: "respond", status: 200, body: "fine" },
      "/slow": { kind: "respond", status: 200, body: "fine", delayMs: 150 },
    },
  });
});

afterAll(async () => {
  await targets.close();
});

function depsWith(defects: HopDefect[], keep?: () => never): HopDeps {
  const keeper = createConnectionKeeper();
  return {
    addresses: createAddressPolicy(LOOPBACK_CIDRS),
    resolver: createResolver({ servers: [] }),
    secureContext: undefined,
    requestHeaders: [["user-agent", "sitediag-test"]],
    maxResponseHeadBytes: 64 * 1024,
    keeper: keep === undefined ? keeper : Object.assign(Object.create(keeper) as typeof keeper, { keeps: true, keep }),
    reportDefect: (defect) => defects.push(defect),
  };
}

function request(path: string): HopRequest {
  return { url: new URL(targets.url(path)), method: "GET", timeoutMs: 5_000, ports: { kind: "fetch-safe" } };
}

function codeOf(outcome: HopOutcome): string {
  return outcome.kind === "failure" ? failureCode(outcome.failure) : outcome.kind;
}

describe("a defect inside a hop", () => {
  it("after the answer (keeping the connection) ends that hop as internal_probe_error, logged once with the host; a hop beside it is answered", async () => {
    const defects: HopDefect[] = [];
    const broken = depsWith(defects, () => {
      throw new TypeError("the keeper broke");
    });
    const healthy = depsWith(defects);
    const [failed, answered] = await Promise.all([runHop(request("/moved"), broken), runHop(request("/slow"), healthy)]);

    expect(codeOf(failed.outcome)).toBe("internal_probe_error");
    expect(failed.outcome).toMatchObject({ kind: "failure", failure: { stage: "http", timedOut: false, cause: "INTERNAL_PROBE_ERROR" } });
    expect(answered.outcome).toMatchObject({ kind: "response", response: { status: 200 } });
    expect(defects).toHaveLength(1);
    expect(defects[0]).toMatchObject({ host: "127.0.0.1", stage: "http" });
    expect(String(defects[0]?.error)).toContain("the keeper broke");
  });

  it("a reporter that throws costs the log line, not the hop", async () => {
    const deps = Object.assign(
      depsWith([], () => {
        throw new RangeError("again");
      }),
      {
        reportDefect: () => {
          throw new Error("no log today");
        },
      },
    );
    const { outcome } = await runHop(request("/moved"), deps);
    expect(codeOf(outcome)).toBe("internal_probe_error");
  });

  it("a failure the target caused is not a defect", async () => {
    const defects: HopDefect[] = [];
    const { outcome } = await runHop(
      { url: new URL(`http://127.0.0.1:${await closedLoopbackPort()}/`), method: "GET", timeoutMs: 2_000, ports: { kind: "fetch-safe" } },
      depsWith(defects),
    );
    expect(codeOf(outcome)).toBe("connect_refused");
    expect(defects).toEqual([]);
  });
});

describe("a socket listener that throws", () => {
  it("ends its own exchange with an InternalProbeError instead of throwing out of the event", async () => {
    const socket = connect({ host: "127.0.0.1", port: targets.httpPort });
    await once(socket, "connect");
    const trace = startTrace(now());
    // The data listener's first act is to time the first byte: a defect there is a throw inside the listener.
    Object.defineProperty(trace, "firstByteAt", {
      get: () => null,
      set: () => {
        throw new TypeError("a listener's defect");
      },
    });
    const exchange = exchangeHttp1(socket, {
      url: new URL(targets.url("/here")),
      method: "GET",
      headers: [],
      maxHeadBytes: 64 * 1024,
      keepAlive: false,
      keepAfterAnswer: false,
      captureHead: false,
      bodyPrefixBytes: 0,
      signal: createDeadline().signal,
      trace,
    });
    const error = await exchange.then(
      () => null,
      (reason: unknown) => reason,
    );
    socket.destroy();
    expect(error).toBeInstanceOf(InternalProbeError);
    expect((error as InternalProbeError).cause).toBeInstanceOf(TypeError);
  });
});

describe("the log line", () => {
  it("is one JSON line at pino's error level with the host, the stage and the defect's own stack", () => {
    const line = defectLine(
      { host: "site.example", stage: "tls", error: new InternalProbeError(new RangeError("Invalid time value")) },
      1_700_000_000_000,
    );
    expect(line.endsWith("\n")).toBe(true);
    expect(line.slice(0, -1)).not.toContain("\n");
    const parsed = JSON.parse(line) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      level: 50,
      time: 1_700_000_000_000,
      service: "sitediag",
      host: "site.example",
      stage: "tls",
      err: { type: "RangeError", message: "Invalid time value" },
    });
    expect((parsed.err as { stack: string }).stack).toContain("RangeError: Invalid time value");
  });

  it("says something of a thrown value that is not an Error", () => {
    const parsed = JSON.parse(defectLine({ host: "h", stage: "http", error: Object.create(null) as object })) as { err: { type: string } };
    expect(parsed.err.type).toBe("object");
  });
});
