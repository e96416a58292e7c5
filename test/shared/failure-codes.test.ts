import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseTargetInput } from "../../src/diagnostics/diagnostic-call.js";
import {
  allFailureCodes,
  CAUSES,
  causeInfo,
  failureCode,
  inputRefusalCause,
  refusalCause,
  STAGE_FALLBACK_CODES,
} from "../../src/shared/failures.js";

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

  it("a code names the stage it belongs to (chain-wide outcomes and our own defects aside)", () => {
    for (const info of Object.values(CAUSES)) {
      if (info.code.startsWith("redirect_") || ["too_many_redirects", "trace_timeout", "internal_probe_error"].includes(info.code))
        continue;
      expect(info.code.split("_")[0]).toBe(info.stage);
    }
  });

  it("a failure's code follows from its cause and stage, timeouts and unknown codes included", () => {
    expect(failureCode({ cause: "ENOTFOUND", stage: "dns" })).toBe("dns_no_such_host");
    expect(failureCode({ cause: "ECONNRESET", stage: "tls" })).toBe("tls_reset");
    expect(failureCode({ cause: "RESPONSE_HEAD_TIMEOUT", stage: "http" })).toBe("http_timeout");
    expect(failureCode({ cause: "HPE_INVALID_CONSTANT", stage: "http" })).toBe("http_invalid_response");
    expect(failureCode({ cause: "EWEIRD", stage: "connect" })).toBe("connect_failed");
    expect(causeInfo("ERR_TLS_CERT_ALTNAME_INVALID", "http").code).toBe("tls_hostname_mismatch");
  });

  it("every refusal rule of a redirect target has its own row", () => {
    for (const rule of ["non_public_address", "bad_port", "port", "credentials", "url_too_long", "scheme", "invalid_url"] as const) {
      expect(refusalCause(rule).code).toMatch(/^redirect_refused_/);
    }
  });

  it("every refusal of the caller's input is a row with a rule and an input_ code", () => {
    const inputRows = Object.entries(CAUSES).filter(([key]) => key.startsWith("INPUT_"));
    expect(inputRows.length).toBeGreaterThan(0);
    for (const [key, info] of inputRows) {
      expect(info.stage, key).toBe("input");
      expect(info.code, key).toMatch(/^input_/);
      expect(info.rule, key).toBeDefined();
    }
    for (const rule of ["non_public_address", "bad_port", "port", "credentials", "url_too_long", "scheme", "invalid_url"] as const) {
      expect(
        inputRows.some(([, info]) => info.rule === rule),
        rule,
      ).toBe(true);
    }
  });

  it("an input row is never taken for an error's code", () => {
    expect(causeInfo("INPUT_SCHEME", "http").code).toBe("http_failed");
    expect(() => inputRefusalCause("INPUT_NOPE")).toThrow();
  });

  it("the caller's URL is refused with the code of its row, and the sentence people read is unchanged", () => {
    const strict = { allowBareDomain: false };
    const cases = [
      ["  ", "input_missing_url", "invalid_url", "The url parameter is required"],
      ["example.com/x", "input_not_absolute", "invalid_url", "The URL must be absolute and include the scheme, as in https://example.com/"],
      ["http://[::1/", "input_invalid_url", "invalid_url", "The URL could not be parsed"],
      ["ftp://a.test/", "input_scheme", "scheme", "Only http and https URLs can be checked, not ftp"],
      [`http://a.test/${"a".repeat(2048)}`, "input_url_too_long", "url_too_long", "The URL is longer than 2048 characters"],
    ] as const;
    for (const [input, code, rule, reason] of cases) {
      expect(parseTargetInput(input, strict), input).toEqual({ ok: false, refusal: { rule, code, reason } });
    }
  });
});
