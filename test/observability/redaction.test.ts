import { describe, expect, it } from "vitest";
import { hostOf, redactUrl, redactValue, requestIdFrom } from "../../src/observability/redaction.js";
import { interleavedMedians } from "../fixtures/interleaved-medians.js";

describe("redactUrl", () => {
  it("replaces the api_key value, whatever its case", () => {
    expect(redactUrl("/api/v1/is-site-down?url=a.test&api_key=sd_secret")).toBe("/api/v1/is-site-down?url=a.test&api_key=%5BREDACTED%5D");
    expect(redactUrl("/x?API_KEY=sd_secret&api_key=sd_other")).not.toContain("sd_");
  });

  it("strips credentials and keys from a target URL in the query, with or without a scheme", () => {
    const logged = redactUrl(`/api/v1/redirect-check?url=${encodeURIComponent("https://alice:hunter2@site.test/p?api_key=sd_inner&q=1")}`);
    expect(logged).not.toContain("alice");
    expect(logged).not.toContain("hunter2");
    expect(logged).not.toContain("sd_inner");
    expect(decodeURIComponent(logged)).toContain("url=https://site.test/p?api_key=%5BREDACTED%5D&q=1");
    const bare = redactUrl(`/api/v1/redirect-check?url=${encodeURIComponent("bob:pw@site.test/path")}`);
    expect(bare).not.toContain("bob");
    expect(decodeURIComponent(bare)).toContain("url=site.test/path");
  });

  it("strips userinfo from an absolute request target and drops the fragment", () => {
    expect(redactUrl("http://u:p@host.test/a?b=1#frag")).toBe("http://host.test/a?b=1");
  });

  it("keeps only the path of a target it cannot parse", () => {
    expect(redactUrl("http://[::1/x?api_key=sd_secret")).toBe("http://[::1/x");
  });
});

describe("redactValue: every spelling a URL parser would read as credentials", () => {
  const table: readonly (readonly [string, string])[] = [
    ["https://admin:pw@site.test/", "https://site.test/"],
    ["HTTPS://admin:pw@site.test/", "https://site.test/"],
    ["//admin:pw@site.test/", "site.test/"],
    [" https://admin:pw@site.test/", "https://site.test/"],
    ["\thttps://admin:pw@site.test/", "https://site.test/"],
    ["ht\ttps://admin:pw@site.test/", "https://site.test/"],
    ["https:admin:pw@site.test/", "https://site.test/"],
    ["https:/admin:pw@site.test/", "https://site.test/"],
    ["https:///admin:pw@site.test/", "https://site.test/"],
    ["https:\\\\admin:pw@site.test/", "https://site.test/"],
    ["admin:pw@site.test/path", "site.test/path"],
    ["https://admin@site.test/", "https://site.test/"],
    ["https://:pw@site.test/", "https://site.test/"],
    ["https://admin:pw@site.test/x?api_key=sd_inner#frag", "https://site.test/x?api_key=%5BREDACTED%5D"],
    // Values no parser reads: anything shaped like credentials is still masked.
    ["https://admin:pw@site.test:99999/", "https://[REDACTED]@site.test:99999/"],
    ["ftp://admin:pw@site.test/", "ftp://[REDACTED]@site.test/"],
    ["https://[::1/admin:pw@x", "https://[::1/[REDACTED]@x"],
    // Nothing to hide: left as given.
    ["https://site.test/a?b=1", "https://site.test/a?b=1"],
    ["site.test", "site.test"],
    ["not a url", "not a url"],
    ["", ""],
  ];
  it.each(table)("%j is logged as %j", (value, logged) => {
    expect(redactValue(value)).toBe(logged);
    expect(redactValue(value)).not.toMatch(/pw|admin/);
  });
});

describe("redactValue's cost is linear in the value (issue 28 audit)", () => {
  it("a 16 KiB value with an @ only at its start costs about what a short-runs one does (it was ~0.5 s: a rescan per position)", () => {
    const size = 16 * 1024;
    const [atStart, shortRuns] = [`@${"a".repeat(size)}`, "a/".repeat(size / 2)];
    const { subject: value, yardstick } = interleavedMedians(
      () => redactValue(atStart),
      () => redactValue(shortRuns),
      7,
    );
    // Generous: the quadratic rescan cost hundreds of times the yardstick.
    expect(value).toBeLessThan(Math.max(yardstick, 0.05) * 30);
  });

  it("still replaces each userinfo-like run, and only those", () => {
    expect(redactValue("not a url: bob@ and x/carol:pw@ too @ alone")).toBe("not a url: [REDACTED]@ and x/[REDACTED]@ too @ alone");
  });
});

describe("hostOf", () => {
  it("gives the host alone, never the port, userinfo or path", () => {
    expect(hostOf("https://user:pw@Site.Test:8443/a?b")).toBe("site.test");
    expect(hostOf("site.test/a")).toBe("site.test");
    expect(hostOf("http://[::1]:80/")).toBe("[::1]");
    expect(hostOf("  ")).toBeNull();
    expect(hostOf("http://")).toBeNull();
  });
});

describe("requestIdFrom", () => {
  it("honours a sane incoming id and replaces anything else with a UUID", () => {
    expect(requestIdFrom("0f8fad5b-d9cb-469f-a165-70867728950e")).toBe("0f8fad5b-d9cb-469f-a165-70867728950e");
    expect(requestIdFrom("Root=1-5e1b4151-5ac6c58f")).toBe("Root=1-5e1b4151-5ac6c58f");
    for (const bad of ["has space", 'quote"', "a".repeat(129), "line\nbreak", "", undefined, ["a", "b"]]) {
      expect(requestIdFrom(bad)).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
