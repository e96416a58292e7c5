import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";

describe("SITEDIAG_STORE", () => {
  it("reads sqlite, redis and redis+cluster locations", () => {
    expect(loadConfig({}).store).toEqual({ kind: "sqlite", path: "./data/sitediag.db" });
    expect(loadConfig({ SITEDIAG_STORE: "redis://127.0.0.1:6379/2" }).store).toEqual({ kind: "redis", url: "redis://127.0.0.1:6379/2" });
    expect(loadConfig({ SITEDIAG_STORE: "redis+cluster://127.0.0.1:7000,127.0.0.1:7001/" }).store).toEqual({
      kind: "redis-cluster",
      nodes: [
        { host: "127.0.0.1", port: 7000 },
        { host: "127.0.0.1", port: 7001 },
      ],
      password: undefined,
    });
    expect(loadConfig({ SITEDIAG_STORE: "redis+cluster://:s%40cret@[::1]:7000" }).store).toEqual({
      kind: "redis-cluster",
      nodes: [{ host: "::1", port: 7000 }],
      password: "s@cret",
    });
  });

  it.each(["redis+cluster://", "redis+cluster://127.0.0.1", "redis+cluster://127.0.0.1:0", "redis+cluster://a:1,,b:2", "memcached://x:1"])(
    "refuses %s naming the variable",
    (value) => {
      expect(() => loadConfig({ SITEDIAG_STORE: value })).toThrow(ConfigError);
      expect(() => loadConfig({ SITEDIAG_STORE: value })).toThrow(/SITEDIAG_STORE/);
    },
  );
});

describe("intake limits", () => {
  it("default to the documented numbers and take settings", () => {
    expect(loadConfig({}).intake).toEqual({
      maxRequestBytes: 65_536,
      requestTimeoutMs: 30_000,
      http2MaxStreams: 100,
      http2SessionMemoryMiB: 8,
      maxConnections: 8_192,
      maxConnectionsPerPeer: 1_024,
    });
    expect(loadConfig({ SITEDIAG_HTTP2_MAX_STREAMS: "10", SITEDIAG_MAX_REQUEST_BYTES: "2048" }).intake).toMatchObject({
      http2MaxStreams: 10,
      maxRequestBytes: 2_048,
    });
    expect(() => loadConfig({ SITEDIAG_MAX_REQUEST_BYTES: "10" })).toThrow(/SITEDIAG_MAX_REQUEST_BYTES/);
    expect(loadConfig({}).hostsFile).toBe("/etc/hosts");
  });
});
