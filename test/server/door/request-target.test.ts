import { describe, expect, it } from "vitest";
import { requestTargetOf } from "../../../src/server/door/request-target.js";

describe("a request target, read once on arrival", () => {
  it("routes by the path up to the first ?, and keeps the target as sent", () => {
    const target = requestTargetOf("/api/v1/is-site-down?url=https%3A%2F%2Fexample.com%2F%3Fa%3D1&api_key=sd_x");
    expect(target.path).toBe("/api/v1/is-site-down");
    expect(target.raw).toBe("/api/v1/is-site-down?url=https%3A%2F%2Fexample.com%2F%3Fa%3D1&api_key=sd_x");
    expect(target.query.get("url")).toBe("https://example.com/?a=1");
    expect(target.query.getAll("api_key")).toEqual(["sd_x"]);
  });

  it("reads the query as a URL against a base does (the REST door's reading before), once", () => {
    for (const raw of ["/x?a=1#b=2", "//other.test/x?a=1&a=2", "/x?a=%ZZ&b=+", "/x", "*"]) {
      const target = requestTargetOf(raw);
      expect([...target.query]).toEqual([...new URL(raw, "http://localhost").searchParams]);
      expect(target.query).toBe(target.query);
    }
  });
});
