import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";

describe("the vantage settings", () => {
  it("default to the vantage `local`, no label or location, 64 jobs at once", () => {
    expect(loadConfig({}).vantage).toEqual({ name: "local", label: undefined, location: undefined, maxJobs: 64 });
  });

  it("take a name, a label, a location and a job count", () => {
    const env = { SITEDIAG_VANTAGE: "eu-west-2", SITEDIAG_VANTAGE_LABEL: "Frankfurt, EU West", SITEDIAG_VANTAGE_LOCATION: "Frankfurt, DE", SITEDIAG_VANTAGE_MAX_JOBS: "8" };
    expect(loadConfig(env).vantage).toEqual({ name: "eu-west-2", label: "Frankfurt, EU West", location: "Frankfurt, DE", maxJobs: 8 });
  });

  it.each(["EU-West", "-eu", "eu_west", "eu west", "eu:west", "{eu}", "a".repeat(33)])("refuse the name %j, naming the variable", (value) => {
    expect(() => loadConfig({ SITEDIAG_VANTAGE: value })).toThrow(ConfigError);
    expect(() => loadConfig({ SITEDIAG_VANTAGE: value })).toThrow(/SITEDIAG_VANTAGE:/);
  });

  it("refuse a label longer than 100 characters and a job count of 0", () => {
    expect(() => loadConfig({ SITEDIAG_VANTAGE_LABEL: "x".repeat(101) })).toThrow(/SITEDIAG_VANTAGE_LABEL/);
    expect(() => loadConfig({ SITEDIAG_VANTAGE_MAX_JOBS: "0" })).toThrow(/SITEDIAG_VANTAGE_MAX_JOBS/);
  });
});
