import { describe, expect, it } from "vitest";
import { storeHint } from "../../src/access/store-hint.js";

describe("the store as the start-up hint names it", () => {
  it("a SQLite file by its absolute path, quoted for a shell", () => {
    expect(storeHint({ kind: "sqlite", path: "./data/it's.db" }, "/srv/app")).toEqual({
      where: "the SQLite file /srv/app/data/it's.db",
      env: "SITEDIAG_STORE='sqlite:/srv/app/data/it'\\''s.db'",
    });
  });

  it("a Redis URL without its password, which stands as <password>", () => {
    expect(storeHint({ kind: "redis", url: "rediss://sitediag:s3cret@redis.internal:6380/0" })).toEqual({
      where: "Redis at rediss://sitediag:<password>@redis.internal:6380/0",
      env: "SITEDIAG_STORE='rediss://sitediag:<password>@redis.internal:6380/0'",
    });
    expect(storeHint({ kind: "redis", url: "redis://127.0.0.1:6379" }).env).toBe("SITEDIAG_STORE='redis://127.0.0.1:6379'");
  });

  it("a Redis Cluster by its seed nodes, the password elided", () => {
    expect(
      storeHint({
        kind: "redis-cluster",
        nodes: [
          { host: "n1", port: 6379 },
          { host: "::1", port: 7000 },
        ],
        password: "x",
      }).env,
    ).toBe("SITEDIAG_STORE='redis+cluster://:<password>@n1:6379,[::1]:7000'");
  });
});
