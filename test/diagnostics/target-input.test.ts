import { describe, expect, it } from "vitest";
import { parseTargetInput } from "../../src/diagnostics/diagnostic-call.js";
import { startingUrlText } from "../../src/diagnostics/starting-url.js";

describe("the one bare-domain rule", () => {
  it.each([
    ["example.com", "https://example.com"],
    ["  example.com/path?q=1  ", "https://example.com/path?q=1"],
    ["example.com:8443/x", "https://example.com:8443/x"],
    ["localhost:80", "https://localhost:80"],
    ["http://example.com/", "http://example.com/"],
    ["HTTPS://Example.com", "HTTPS://Example.com"],
    ["ftp://example.com/", "ftp://example.com/"],
    ["mailto:a@example.com", "mailto:a@example.com"],
    // A "://" before any path names a scheme, even one that is none: taken as written (issue 39), never guessed as a domain.
    ["ht!tp://bad url", "ht!tp://bad url"],
    ["example.com/go?to=https://b.test/", "https://example.com/go?to=https://b.test/"],
    ["", ""],
    ["   ", ""],
  ])("%j starts from %j", (typed, start) => {
    expect(startingUrlText(typed)).toBe(start);
  });

  it("is the rule redirect-check reads its input by: a bare domain parses as its https:// form, a scheme as given", () => {
    for (const typed of [
      "example.com",
      "example.com:8443/x?y",
      "ht!tp://bad url",
      "a.test/x?u=http://b/",
      "http://example.com/",
      "ftp://example.com/",
      "mailto:a@example.com",
      "exa mple.com",
      "",
    ]) {
      expect(parseTargetInput(typed, { allowBareDomain: true }), typed).toEqual(
        parseTargetInput(startingUrlText(typed), { allowBareDomain: false }),
      );
    }
  });
});

describe("an input that holds :// but is no URL", () => {
  it("is refused as no URL by both operations, before anything is looked up", () => {
    for (const rules of [{ allowBareDomain: true }, { allowBareDomain: false }]) {
      expect(parseTargetInput("ht!tp://bad url", rules)).toMatchObject({
        ok: false,
        refusal: { code: "input_invalid_url", rule: "invalid_url" },
      });
      expect(parseTargetInput("h ttp://example.com/", rules)).toMatchObject({ ok: false, refusal: { code: "input_invalid_url" } });
    }
  });
});
