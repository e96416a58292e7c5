import { describe, expect, it } from "vitest";
import { altNameEntries, isoDate, nameLine, nameParts, shownText } from "../../../src/probe/connect/certificate-text.js";
import { CERTIFICATE_TEXT } from "../../../src/shared/limits.js";

/** The total readers of a certificate's fields (issue 28): a value for every input, never more than the limits. */
describe("certificate text", () => {
  it("an unreadable date is empty; a readable one, extreme years included, is ISO-8601", () => {
    expect(isoDate("Bad time value")).toBe("");
    expect(isoDate("")).toBe("");
    expect(isoDate("Jan  1 00:00:00 2030 GMT")).toBe("2030-01-01T00:00:00.000Z");
    expect(isoDate("Dec 31 23:59:59 9999 GMT")).toBe("9999-12-31T23:59:59.000Z");
  });

  it("control characters and bidi overrides are replaced, other text is kept", () => {
    expect(shownText("a\u0000b\u001b[2Jc\u007fd\u0085e\u202ef\u2066g")).toBe("a\ufffdb\ufffd[2Jc\ufffdd\ufffde\ufffdf\ufffdg");
    expect(shownText("café 中文 \ud83d\ude00")).toBe("café 中文 \ud83d\ude00");
  });

  it("a long text is cut to the limit with an ellipsis, never between the halves of a surrogate pair", () => {
    const long = "x".repeat(CERTIFICATE_TEXT.maxChars * 3);
    expect(shownText(long)).toHaveLength(CERTIFICATE_TEXT.maxChars);
    expect(shownText(long).endsWith("…")).toBe(true);
    const pairAtCut = `${"x".repeat(CERTIFICATE_TEXT.maxChars - 2)}\ud83d\ude00tail`;
    const cut = shownText(pairAtCut);
    expect(cut.length).toBeLessThanOrEqual(CERTIFICATE_TEXT.maxChars);
    expect(cut).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });

  it("subjectAltName entries: none, odd separators, and thousands kept to the limit", () => {
    expect(altNameEntries("")).toEqual([]);
    expect(altNameEntries("DNS:a, , DNS:b, ")).toEqual(["DNS:a", "DNS:b"]);
    const many = Array.from({ length: 5_000 }, (_, i) => `DNS:n${i}.test`).join(", ");
    const kept = altNameEntries(many);
    expect(kept).toHaveLength(CERTIFICATE_TEXT.maxAltNames);
    expect(kept[0]).toBe("DNS:n0.test");
  });

  it("names: the attributes asked, in order; none is empty", () => {
    expect(nameParts("O=Org\nCN=Site", ["CN", "O"])).toBe("Site, Org");
    expect(nameParts("", ["CN"])).toBe("");
    expect(nameLine("O=Org\nCN=Site")).toBe("O=Org, CN=Site");
  });
});
