import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { VERSION } from "../../src/package-info.js";

describe("the vantage settings", () => {
  it("default to the vantage `local`, no label or location, 64 jobs at once", () => {
    expect(loadConfig({}).vantage).toEqual({
      name: "local",
      label: undefined,
      location: undefined,
      maxJobs: 64,
      forgetAfterMs: 86_400_000,
      version: VERSION,
    });
  });

  it("take a name, a label, a location and a job count", () => {
    const env = {
      SITEDIAG_VANTAGE: "eu-west-2",
      SITEDIAG_VANTAGE_LABEL: "Frankfurt, EU West",
      SITEDIAG_VANTAGE_LOCATION: "Frankfurt, DE",
      SITEDIAG_VANTAGE_MAX_JOBS: "8",
    };
    expect(loadConfig(env).vantage).toMatchObject({
      name: "eu-west-2",
      label: "Frankfurt, EU West",
      location: "Frankfurt, DE",
      maxJobs: 8,
    });
  });

  it.each(["EU-West", "-eu", "eu_west", "eu west", "eu:west", "{eu}", "a".repeat(33)])(
    "refuse the name %j, naming the variable",
    (value) => {
      expect(() => loadConfig({ SITEDIAG_VANTAGE: value })).toThrow(ConfigError);
      expect(() => loadConfig({ SITEDIAG_VANTAGE: value })).toThrow(/SITEDIAG_VANTAGE:/);
    },
  );

  it("refuse a label longer than 100 characters and a job count of 0", () => {
    expect(() => loadConfig({ SITEDIAG_VANTAGE_LABEL: "x".repeat(101) })).toThrow(/SITEDIAG_VANTAGE_LABEL/);
    expect(() => loadConfig({ SITEDIAG_VANTAGE_MAX_JOBS: "0" })).toThrow(/SITEDIAG_VANTAGE_MAX_JOBS/);
  });

  it.each([
    ["3600", 3_600_000],
    ["90s", 90_000],
    ["30m", 1_800_000],
    ["24h", 86_400_000],
    ["2d", 172_800_000],
  ])("read SITEDIAG_VANTAGE_FORGET_AFTER %j as %d ms", (value, ms) => {
    expect(loadConfig({ SITEDIAG_VANTAGE_FORGET_AFTER: value }).vantage.forgetAfterMs).toBe(ms);
  });

  it.each(["5s", "1w", "-1h", "24 h", "91d", "h"])("refuse SITEDIAG_VANTAGE_FORGET_AFTER %j", (value) => {
    expect(() => loadConfig({ SITEDIAG_VANTAGE_FORGET_AFTER: value })).toThrow(/SITEDIAG_VANTAGE_FORGET_AFTER/);
  });

  it("announce another build only when told, and only as a plain version text", () => {
    expect(loadConfig({ SITEDIAG_VANTAGE_VERSION: "0.0.1-old" }).vantage.version).toBe("0.0.1-old");
    expect(() => loadConfig({ SITEDIAG_VANTAGE_VERSION: '0.1"x' })).toThrow(/SITEDIAG_VANTAGE_VERSION/);
  });
});
