import { describe, expect, it } from "vitest";
import { MAX_CLIENT_REDIRECT_BODY_BYTES } from "../../src/diagnostics/client-redirect.js";
import { headerMapOf } from "../../src/probe/http/header-map.js";
import { type FinalPage, isRedirectToHome, searchSignals, searchWarningTexts } from "../../src/diagnostics/search-signals.js";
import { soft404Phrase } from "../../src/diagnostics/soft-404-words.js";
import { scanPageMarkup } from "../../src/diagnostics/search-page-scan.js";
import { interleavedMedians } from "../fixtures/interleaved-medians.js";

/** What the final page tells search engines (issue 39), read from its head fields and body prefix. */
const FINAL = "https://example.test/new/page";

function page(
  html: string | null,
  fields: readonly (readonly [string, string])[] = [["content-type", "text/html; charset=utf-8"]],
  more: Partial<FinalPage> = {},
): FinalPage {
  return {
    startUrl: FINAL,
    url: FINAL,
    redirects: 0,
    status: 200,
    headers: headerMapOf(fields),
    body: html === null ? null : new TextEncoder().encode(html),
    ...more,
  };
}

const CLEAN = `<!doctype html><html><head><title>Blue widgets | Example</title><meta name="robots" content="index, follow">
<link rel="canonical" href="${FINAL}"><meta name="description" content="Not found elsewhere: our widgets"></head>
<body><h1>Blue widgets</h1><p>Page not found? Never here.</p></body></html>`;

describe("a clean page raises none of the new warnings", () => {
  it("no noindex, a canonical naming itself, no soft 404, no redirect to home", () => {
    const signals = searchSignals(page(CLEAN));
    expect(signals).toEqual({
      noindex: null,
      canonical: { url: FINAL, source: "link_element", elsewhere: false },
      redirectToHome: false,
      soft404: null,
      bodyRead: true,
    });
    expect(searchWarningTexts(signals, FINAL)).toEqual([]);
  });

  it("nothing for an answer that is no 2xx", () => {
    expect(searchSignals(page('<meta name="robots" content="noindex">', undefined, { status: 404 }))).toBeNull();
  });
});

describe("noindex", () => {
  it.each([
    ['<meta name="robots" content="noindex">', { source: "meta", directive: "noindex", scope: "robots" }],
    ['<META NAME="Googlebot" CONTENT="NoIndex, nofollow">', { source: "meta", directive: "noindex", scope: "googlebot" }],
    ["<meta name=bingbot content=none>", { source: "meta", directive: "none", scope: "bingbot" }],
    ['<meta content="nofollow, noindex" name="robots">', { source: "meta", directive: "noindex", scope: "robots" }],
  ])("%s", (html, noindex) => {
    expect(searchSignals(page(html))?.noindex).toEqual(noindex);
  });

  it.each([
    [["x-robots-tag", "noindex"], { source: "header", directive: "noindex", scope: null }],
    [["x-robots-tag", "noarchive, NONE"], { source: "header", directive: "none", scope: null }],
    [["x-robots-tag", "googlebot: noindex"], { source: "header", directive: "noindex", scope: "googlebot" }],
    [["X-Robots-Tag", "unavailable_after: 25 Jun 2030 15:00:00 PST, noindex"], { source: "header", directive: "noindex", scope: null }],
    [["x-robots-tag", "bingbot: nofollow, noindex"], { source: "header", directive: "noindex", scope: "bingbot" }],
  ] as const)("X-Robots-Tag %j", (field, noindex) => {
    expect(searchSignals(page(null, [[field[0].toLowerCase(), field[1]]]))?.noindex).toEqual(noindex);
  });

  it.each([
    ['<meta name="robots" content="noindexer">'],
    ['<meta name="otherbot" content="noindex">'],
    ['<!-- <meta name="robots" content="noindex"> -->'],
    ['<script>var s = \'<meta name="robots" content="noindex">\'</script>'],
  ])("none for %s", (html) => {
    expect(searchSignals(page(html))?.noindex).toBeNull();
  });

  it("a directive scoped to another crawler is not Google's or Bing's", () => {
    expect(searchSignals(page(null, [["x-robots-tag", "otherbot: noindex, nofollow"]]))?.noindex).toBeNull();
  });
});

describe("canonical_elsewhere", () => {
  it.each([
    ['<link rel="canonical" href="/other">', "https://example.test/other", "link_element"],
    ['<link REL="Canonical alternate" href="https://example.test/new/page?x=1">', "https://example.test/new/page?x=1", "link_element"],
    ['<link href="https://www.example.test/new/page" rel=canonical>', "https://www.example.test/new/page", "link_element"],
  ])("%s", (html, url, source) => {
    expect(searchSignals(page(html))?.canonical).toEqual({ url, source, elsewhere: true });
  });

  it("from a Link header, resolved against the final URL", () => {
    const signals = searchSignals(page(null, [["link", '</style.css>; rel=preload, </elsewhere>; rel="canonical"']]));
    expect(signals?.canonical).toEqual({ url: "https://example.test/elsewhere", source: "link_header", elsewhere: true });
  });

  it("a canonical that names the final URL (fragment aside) is not elsewhere", () => {
    expect(searchSignals(page(`<link rel=canonical href="${FINAL}#top">`))?.canonical?.elsewhere).toBe(false);
  });

  it("a quoted parameter holding commas does not split the Link", () => {
    expect(searchSignals(page(null, [["link", '<https://a.test/x>; title="a, b; c"; rel="canonical"']]))?.canonical?.url).toBe(
      "https://a.test/x",
    );
  });
});

describe("redirect_to_home", () => {
  it.each([
    ["https://old.test/deep/old/page", "https://old.test/", true],
    ["http://old.test/deep/", "https://www.new.test/", true],
    ["https://old.test/", "https://old.test/", false],
    ["https://old.test/index.html", "https://old.test/", false],
    ["https://old.test/deep/old/page", "https://old.test/?from=old", false],
    ["https://old.test/deep/old/page", "https://old.test/new/page", false],
  ])("%s to %s: %s", (start, final, expected) => {
    expect(isRedirectToHome(start, final)).toBe(expected);
  });

  it("only after a redirect", () => {
    expect(
      searchSignals(page(null, undefined, { startUrl: "https://a.test/x", url: "https://a.test/", redirects: 0 }))?.redirectToHome,
    ).toBe(false);
    expect(
      searchSignals(page(null, undefined, { startUrl: "https://a.test/x", url: "https://a.test/", redirects: 1 }))?.redirectToHome,
    ).toBe(true);
  });
});

describe("soft_404_suspected", () => {
  it.each([
    "Page not found | Example",
    "404 - Not Found",
    "Error 404",
    "410 Gone",
    "Oops! That page can’t be found.",
    "Seite nicht gefunden – Beispiel",
    "Page introuvable",
    "Página no encontrada",
    "Pagina non trovata",
    "Página não encontrada",
    "Pagina niet gevonden",
    "Страница не найдена",
    "ページが見つかりません",
    "页面不存在",
  ])("%s", (title) => {
    expect(soft404Phrase(title)).not.toBeNull();
  });

  it.each([
    "Why bugs are not found in testing",
    "Gone Girl | Movies",
    "Lost and found: a story",
    "The 404 area code",
    "Page 2 of results",
    "Blue widgets | Example",
    "Error handling in Rust",
  ])("not for the normal page %s", (title) => {
    expect(soft404Phrase(title)).toBeNull();
  });

  it("from the title or, failing it, the first h1, only on a 200", () => {
    expect(searchSignals(page("<title>Not Found</title>"))?.soft404).toEqual({ source: "title", text: "Not Found" });
    expect(searchSignals(page("<title>Shop</title><h1>Sorry, <em>page</em> not found</h1><h1>Other</h1>"))?.soft404).toEqual({
      source: "heading",
      text: "Sorry, page not found",
    });
    expect(searchSignals(page("<title>Not Found</title>", undefined, { status: 203 }))?.soft404).toBeNull();
  });

  it("a body that is not HTML is not read", () => {
    expect(searchSignals(page("<title>Not Found</title>", [["content-type", "application/json"]]))).toMatchObject({
      soft404: null,
      bodyRead: false,
    });
  });
});

describe("a hostile page costs no more than a plain one", () => {
  const fill = (unit: string) =>
    unit.repeat(Math.ceil(MAX_CLIENT_REDIRECT_BODY_BYTES / unit.length)).slice(0, MAX_CLIENT_REDIRECT_BODY_BYTES);
  const plain = fill(
    '<p class="intro">Some text of a page, with <a href="/x?a=1&amp;b=2">a link</a> and <b>bold</b>.</p>\n<div id="d"><img src="/i.png" alt="pic"></div><!-- note -->\n',
  );
  const run = (html: string) => () => searchSignals(page(html));

  // Each shape against the plain page, measured in the same run: a rescan per tag would cost thousands of times it;
  // measured alone, every shape costs 0.2-2x the plain page, and 200x leaves room for a machine busy with other suites.
  it.each([
    ["a huge attribute", `<link rel="canonical" href="${fill("a")}`],
    [
      "a closed 60 KiB canonical and robots metas of 4 KiB",
      `<link rel=canonical href="/${"a".repeat(60_000)}">${fill(`<meta name=robots content="${"x".repeat(4_000)}">`)}`,
    ],
    ["a huge title", `<title>${fill("Not found ")}`],
    ["a heading that never ends", `<h1>${fill("<b>not</b> found ")}`],
    ["thousands of robots metas", fill('<meta name="robots" content="index">')],
    ["thousands of links", fill('<link rel="alternate canonical" href="/x">')],
    ["an unclosed comment", `<!--${fill("-")}`],
    ["a `<` flood", fill("<")],
    ["odd bytes", fill("\u0000\uFFFD<\u00e9&#x0;&amp")],
    ["references everywhere", `<title>${fill("&amp;&#x41;&nbsp;")}</title>`],
  ])("%s", (_label, html) => {
    expect(() => searchSignals(page(html))).not.toThrow();
    // What is kept is capped whatever the page holds (a URL at 2,048 characters, a title at 200; the scan's own notes at 16 metas of 4 KiB).
    expect(JSON.stringify(searchSignals(page(html))).length).toBeLessThan(3_000);
    expect(JSON.stringify(scanPageMarkup(html)).length).toBeLessThan(80_000);
    const { subject, yardstick } = interleavedMedians(run(html), run(plain), 9);
    expect(subject).toBeLessThan(Math.max(yardstick, 0.05) * 200);
  });

  it("a hostile page's retained memory stays within a plain one's bound", () => {
    const hostile = searchSignals(page(`<title>${fill("x")}</title><h1>${fill("y")}`));
    // What is kept is capped whatever the page holds: the title and heading at 200 characters each.
    expect(hostile?.soft404).toBeNull();
    const kept = JSON.stringify(searchSignals(page(`<title>${fill("Not found ")}`)));
    expect(kept.length).toBeLessThan(1_000);
  });

  it("header values of any size are read in one pass", () => {
    const huge = `${"noarchive, ".repeat(20_000)}googlebot: noindex`;
    const links = `${'<https://a.test/x>; rel="preload", '.repeat(5_000)}<https://a.test/c>; rel=canonical`;
    const signals = searchSignals(
      page(null, [
        ["x-robots-tag", huge],
        ["link", links],
      ]),
    );
    expect(signals?.noindex).toEqual({ source: "header", directive: "noindex", scope: "googlebot" });
    expect(signals?.canonical?.url).toBe("https://a.test/c");
    const { subject, yardstick } = interleavedMedians(
      () =>
        searchSignals(
          page(null, [
            ["x-robots-tag", huge],
            ["link", links],
          ]),
        ),
      () => searchSignals(page(plain)),
      9,
    );
    expect(subject).toBeLessThan(Math.max(yardstick, 0.05) * 200);
  });
});
