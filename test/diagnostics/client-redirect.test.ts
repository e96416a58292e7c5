import { describe, expect, it } from "vitest";
import {
  clientRedirectOf,
  MAX_CLIENT_REDIRECT_BODY_BYTES,
  metaRefreshContent,
  parseRefresh,
} from "../../src/diagnostics/client-redirect.js";

const PAGE = "https://site.test/dir/page?x=1";
const bytes = (text: string) => new TextEncoder().encode(text);
const HTML = { "content-type": "text/html; charset=utf-8" };

describe("parseRefresh reads a refresh value as HTML's declarative refresh does", () => {
  it.each([
    ["0; url=https://other.test/", { url: "https://other.test/", delaySeconds: 0 }],
    ["5;URL=/next", { url: "https://site.test/next", delaySeconds: 5 }],
    ["3, url = 'quoted.html'", { url: "https://site.test/dir/quoted.html", delaySeconds: 3 }],
    ['  10 ; url="https://a.test/b c"', { url: "https://a.test/b%20c", delaySeconds: 10 }],
    ["1.5; url=/half", { url: "https://site.test/half", delaySeconds: 1 }],
    [".5; url=/frac", { url: "https://site.test/frac", delaySeconds: 0 }],
    ["0;/bare", { url: "https://site.test/bare", delaySeconds: 0 }],
    ["7 https://space.test/", { url: "https://space.test/", delaySeconds: 7 }],
    ["2; url='unterminated", { url: "https://site.test/dir/unterminated", delaySeconds: 2 }],
  ])("%j", (value, expected) => {
    expect(parseRefresh(value, PAGE)).toEqual(expected);
  });

  it.each([
    ["no number", "url=/x"],
    ["a reload only", "30"],
    ["a reload with an empty url", "0; url="],
    ["junk after the number", "5x; url=/x"],
    ["empty", ""],
    ["an unparsable target", "0; url=http://[bad"],
    ["an over-long value", `0; url=/${"a".repeat(5000)}`],
  ])("%s is no redirect", (_label, value) => {
    expect(parseRefresh(value, PAGE)).toBeNull();
  });
});

describe("metaRefreshContent finds the tag a browser would act on", () => {
  it.each([
    ['<meta http-equiv="refresh" content="0; url=/a">', "0; url=/a"],
    ["<META HTTP-EQUIV=Refresh CONTENT='2;url=/b'>", "2;url=/b"],
    ['<meta content="1; url=/c" http-equiv="REFRESH" />', "1; url=/c"],
    ['<meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/q?a=1&amp;b=2">', "0;url=/q?a=1&b=2"],
    ['<!-- <meta http-equiv="refresh" content="0; url=/hidden"> --><meta http-equiv="refresh" content="0; url=/shown">', "0; url=/shown"],
  ])("%s", (html, content) => {
    expect(metaRefreshContent(html)).toBe(content);
  });

  it.each([
    ['<meta name="refresh" content="0; url=/a">'],
    ['<meta http-equiv="content-type" content="text/html">'],
    ['<!-- <meta http-equiv="refresh" content="0; url=/a">'],
    ["<p>no meta at all</p>"],
  ])("none in %s", (html) => {
    expect(metaRefreshContent(html)).toBeNull();
  });
});

describe("clientRedirectOf", () => {
  it("prefers the Refresh header, as browsers act on it before the document", () => {
    const body = bytes('<meta http-equiv="refresh" content="0; url=/meta">');
    expect(clientRedirectOf(200, { ...HTML, refresh: "3; url=/header" }, body, PAGE)).toEqual({
      kind: "refresh_header",
      url: "https://site.test/header",
      delaySeconds: 3,
    });
  });

  it("reads a meta refresh from a 2xx HTML body", () => {
    const body = bytes('<html><head><meta http-equiv="refresh" content="4; url=https://next.test/"></head></html>');
    expect(clientRedirectOf(200, HTML, body, PAGE)).toEqual({ kind: "meta_refresh", url: "https://next.test/", delaySeconds: 4 });
  });

  it("does not read bodies of errors, of non-HTML, or past the first 64 KiB", () => {
    const tag = '<meta http-equiv="refresh" content="0; url=/x">';
    expect(clientRedirectOf(404, HTML, bytes(tag), PAGE)).toBeNull();
    expect(clientRedirectOf(200, { "content-type": "application/json" }, bytes(tag), PAGE)).toBeNull();
    expect(clientRedirectOf(200, HTML, bytes(`${" ".repeat(MAX_CLIENT_REDIRECT_BODY_BYTES)}${tag}`), PAGE)).toBeNull();
    expect(clientRedirectOf(200, HTML, null, PAGE)).toBeNull();
  });

  it("searches a body that declares no type, as browsers sniff it", () => {
    expect(clientRedirectOf(200, {}, bytes('<meta http-equiv="refresh" content="0; url=/sniffed">'), PAGE)?.url).toBe(
      "https://site.test/sniffed",
    );
  });
});
