import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";

describe("SITEDIAG_PROBE_THREADS", () => {
  const cores = availableParallelism();

  it("defaults to the cores left once each serve process's main thread has one, at least 1", () => {
    expect(loadConfig({}).probeThreads).toBe(Math.max(1, cores - 1));
    expect(loadConfig({ SITEDIAG_PROBE_THREADS: "auto" }).probeThreads).toBe(Math.max(1, cores - 1));
    expect(loadConfig({ SITEDIAG_WORKERS: "auto" }).probeThreads).toBe(1);
    expect(loadConfig({ SITEDIAG_WORKERS: "64" }).probeThreads).toBe(1);
  });

  it("takes 0 (probes on the main thread) to 64", () => {
    expect(loadConfig({ SITEDIAG_PROBE_THREADS: "0" }).probeThreads).toBe(0);
    expect(loadConfig({ SITEDIAG_PROBE_THREADS: "3" }).probeThreads).toBe(3);
    expect(loadConfig({ SITEDIAG_PROBE_THREADS: "64" }).probeThreads).toBe(64);
  });

  it.each(["65", "-1", "two", "1.5"])("refuses %s naming the variable", (value) => {
    expect(() => loadConfig({ SITEDIAG_PROBE_THREADS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ SITEDIAG_PROBE_THREADS: value })).toThrow(/SITEDIAG_PROBE_THREADS/);
  });
});

describe("the probe queue settings", () => {
  it("default to a 10 ms loop delay and 1024 waiting checks, and take settings", () => {
    expect(loadConfig({})).toMatchObject({ probeMaxLoopDelayMs: 10, probeQueue: 1_024 });
    expect(loadConfig({ SITEDIAG_PROBE_MAX_LOOP_DELAY_MS: "25", SITEDIAG_PROBE_QUEUE: "0" })).toMatchObject({
      probeMaxLoopDelayMs: 25,
      probeQueue: 0,
    });
  });

  it("refuses a delay of 0, naming the variable", () => {
    expect(() => loadConfig({ SITEDIAG_PROBE_MAX_LOOP_DELAY_MS: "0" })).toThrow(/SITEDIAG_PROBE_MAX_LOOP_DELAY_MS/);
  });
});
