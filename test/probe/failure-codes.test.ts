import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { allFailureCodes, CAUSES, causeInfo, failureCode, refusalCause, STAGE_FALLBACK_CODES } from "../../src/probe/failure-causes.js";

/** The codes of the README's table of failure codes, in order. */
function readmeCodes(): string[] {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const heading = "### Every failure `code` (`details`)";
  const start = readme.indexOf(heading);
  expect(start).toBeGreaterThanOrEqual(0);
  const body = readme.slice(start + heading.length).split(/\n#{2,3} /)[0] ?? "";
  return [...body.matchAll(/^\| `([a-z0-9_]+)` \|/gm)].map((match) => match[1] ?? "");
}

describe("stable failure codes", () => {
  it("every row of the one table has a snake_case code", () => {
    for (const info of Object.values(CAUSES)) expect(info.code).toMatch(/^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/);
    for (const code of Object.values(STAGE_FALLBACK_CODES)) expect(code).toMatch(/^(?:dns|connect|tls|http)_failed$/);
  });

  it("the README lists every code the table has, and no other", () => {
    const listed = readmeCodes();
    expect(new Set(listed).size).toBe(listed.length);
    expect(new Set(listed)).toEqual(allFailureCodes());
  });

  it("a code names the stage it belongs to (chain-wide outcomes aside)", () => {
    for (const info of Object.values(CAUSES)) {
      if (info.code.startsWith("redirect_") || ["too_many_redirects", "trace_timeout"].includes(info.code)) continue;
      expect(info.code.split("_")[0]).toBe(info.stage);
    }
  });

  it("a failure's code follows from its cause and stage, timeouts and unknown codes included", () => {
    expect(failureCode({ cause: "ENOTFOUND", stage: "dns" })).toBe("dns_no_such_host");
    expect(failureCode({ cause: "ECONNRESET", stage: "tls" })).toBe("tls_reset");
    expect(failureCode({ cause: "UND_ERR_HEADERS_TIMEOUT", stage: "http" })).toBe("http_timeout");
    expect(failureCode({ cause: "HPE_INVALID_CONSTANT", stage: "http" })).toBe("http_invalid_response");
    expect(failureCode({ cause: "EWEIRD", stage: "connect" })).toBe("connect_failed");
    expect(causeInfo("ERR_TLS_CERT_ALTNAME_INVALID", "http").code).toBe("tls_hostname_mismatch");
  });

  it("every refusal rule of a redirect target has its own row", () => {
    for (const rule of ["non_public_address", "bad_port", "port", "credentials", "url_too_long", "scheme", "invalid_url"] as const) {
      expect(refusalCause(rule).code).toMatch(/^redirect_refused_/);
    }
  });
});
