/**
 * What the page shows of each request (details), in a real browser against
 * `sitediag serve` as its own process, with loopback targets (the setup of
 * page.test.ts): a server that accepts and never answers drawn as a waiting
 * phase of its own, timing tables whose phases add up to their totals and
 * to the figure above them, a HEAD answered before its GET as a request of
 * its own.
 *
 * SITEDIAG_UPDATE_SCREENSHOTS=1 writes docs/page-hang.png; otherwise it goes to a temp dir.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { chromiumAvailability } from "../fixtures/chromium.js";
import { askOnPage, type PageRig, startPageRig } from "../fixtures/page-rig.js";

const chromium = chromiumAvailability();
const DOCS = join(import.meta.dirname, "..", "..", "docs");

/** A header value that is markup: shown as text, it runs nothing and adds no element. */
const MARKUP = `<img src="/x" onerror="document.title='owned'"><b>bold</b>`;
/** Obs-text bytes 0x9B, 0x9D, 0x9C (C1 controls as latin1 decodes them): text on the page, where no terminal reads them. */
const CONTROLS = "a\u009b2Jb\u009d0;t\u009cc";

/** "12.3 ms" as tenths of a millisecond; 0 for a dash or "reused" (a phase that did not happen). */
function tenths(cell: string | undefined): number {
  const match = /^(\d+\.\d) ms$/.exec(cell ?? "");
  return match === null ? 0 : Math.round(Number.parseFloat(match[1] ?? "0") * 10);
}

describe.skipIf(!chromium.available)("the page's details, in Chromium", () => {
  let dir: string;
  let targets: HttpTargets;
  let key: string;
  let rig: PageRig;
  const screenshots = process.env.SITEDIAG_UPDATE_SCREENSHOTS === "1" ? DOCS : undefined;
  const secure = (path: string) => targets.url(path, { secure: true });

  beforeAll(async () => {
    const pki = await getTestPki();
    targets = await startHttpTargets({ tls: pki.valid });
    targets.route("/hang", { kind: "hang" });
    targets.route("/a", { kind: "redirect", status: 301, location: "/b" });
    targets.route("/b", { kind: "redirect", status: 302, location: "/c" });
    targets.route("/c", { kind: "respond", status: 200, body: "landed" });
    targets.route("/cookie", {
      kind: "redirect",
      status: 302,
      location: "/c",
      headers: { "Set-Cookie": "sid=s3cr3t; Path=/; HttpOnly", "X-Served-By": "edge-1" },
    });
    targets.route("/sts", (request) =>
      request.secure
        ? {
            kind: "respond",
            status: 200,
            headers: { "strict-transport-security": "max-age=86400; includeSubDomains", "alt-svc": 'h3=":443"; ma=60' },
          }
        : { kind: "redirect", status: 301, location: targets.url("/sts", { secure: true }) },
    );
    targets.route("/markup", { kind: "respond", status: 200, headers: { "X-Markup": MARKUP, "X-Controls": CONTROLS } });
    targets.route("/no-head", (request) =>
      request.method === "HEAD" ? { kind: "respond", status: 405 } : { kind: "respond", status: 200, body: "fine" },
    );
    rig = await startPageRig("page-details", {
      SITEDIAG_TRACE_PORTS: `${targets.httpPort},${targets.httpsPort ?? 0}`,
      // The hang as a person meets it takes the whole per-request timeout; 3 s keeps the test short.
      SITEDIAG_SITE_TIMEOUT_MS: "3000",
    });
    ({ dir, key } = rig);
  });

  afterAll(async () => {
    await rig?.close();
    await targets?.close();
  });

  const open = () => rig.open("/", { viewport: { width: 1280, height: 900 } });

  afterEach(() => rig.settle());

  // A hang takes the whole per-request timeout before its answer is drawn.
  const ask = (page: Page, url: string, button: "Is it down?" | "Trace redirects") => askOnPage(page, url, button, key, 20_000);

  /** The timing table: its heading cells, and each row's cells. */
  async function timingTable(page: Page): Promise<{ headings: string[]; rows: string[][] }> {
    const headings = await page.locator("#result table.timings thead th").allInnerTexts();
    const rows = page.locator("#result table.timings tbody tr");
    const cells: string[][] = [];
    for (let row = 0; row < (await rows.count()); row++) cells.push(await rows.nth(row).locator("td, th").allInnerTexts());
    return { headings, rows: cells };
  }

  it("draws a server that accepts and never answers as a waiting phase of its own, and says how far the request got", async () => {
    const page = await open();
    await ask(page, secure("/hang"), "Is it down?");
    expect(await page.locator("#result .verdict-word").textContent()).toBe("DOWN");
    // The bar: connect, TLS, then the wait in its own colour, to the timeout; no grey "Other" holding the seconds.
    const bar = page.locator("#result svg.waterfall .bar").first();
    const waiting = await bar.locator("rect.phase-waiting title").textContent();
    expect(waiting).toMatch(/^Request 1, Waiting: \d+\.\d ms$/);
    expect(tenths(waiting?.replace(/^.*: /, ""))).toBeGreaterThanOrEqual(27_000);
    for (const other of await bar.locator("rect.phase-other title").allTextContents())
      expect(tenths(other.replace(/^.*: /, ""))).toBeLessThan(1_000);
    expect(await page.locator("#result .legend").innerText()).toContain("Waiting");
    const { headings, rows } = await timingTable(page);
    expect(headings).toEqual([
      "#",
      "Request",
      "Status",
      "DNS",
      "Connect",
      "TLS",
      "Waiting",
      "Receiving",
      "Other",
      "Total",
      "Address",
      "HTTP",
    ]);
    expect(rows[0]?.[2]).toBe("timed out at http");
    expect(await page.locator("#result .request-stories").innerText()).toMatch(
      /^Request 1: connected in \d+\.\d ms, TLS done in \d+\.\d ms, then no response in \d+\.\d ms\. Timed out after 3 s waiting for a response$/,
    );
    expect(tenths(rows[0]?.[6])).toBeGreaterThanOrEqual(27_000);
    await page.screenshot({ path: join(screenshots ?? dir, "page-hang.png"), fullPage: true });
  });

  it("a row's phases add up to its total; the total time is the sum of the chain's totals, and each hop's time is its row's total", async () => {
    const page = await open();
    await ask(page, secure("/a"), "Trace redirects");
    const { headings, rows } = await timingTable(page);
    const total = headings.indexOf("Total");
    expect(rows).toHaveLength(4);
    for (const row of rows) expect(row.slice(3, total).reduce((sum, cell) => sum + tenths(cell), 0)).toBe(tenths(row[total]));
    // The extra read of the final page comes after the trace's own time, which a line marks.
    const chainTenths = rows.slice(0, 3).reduce((sum, row) => sum + tenths(row[total]), 0);
    expect(await page.locator("#result .facts").innerText()).toContain(`Total time\n${(chainTenths / 10).toFixed(1)} ms`);
    expect(await page.locator("#result svg.waterfall .chain-end title").textContent()).toContain(`${(chainTenths / 10).toFixed(1)} ms`);
    const hopTimes = await page
      .locator("#result table.hops tbody tr")
      .evaluateAll((trs) => trs.map((tr) => tr.children[5]?.textContent ?? ""));
    expect(hopTimes).toEqual(rows.slice(0, 3).map((row) => row[total]));
  });

  it("shows each request's response headers, collapsed, as received, with no cookie's value", async () => {
    const page = await open();
    await ask(page, secure("/cookie"), "Trace redirects");
    const blocks = page.locator("#result details.response-headers");
    // HEAD /cookie, HEAD /c, and the extra GET of the final page.
    expect(await blocks.count()).toBe(3);
    const first = blocks.first();
    expect(await first.getAttribute("open")).toBeNull();
    expect(await first.locator("summary").innerText()).toMatch(
      new RegExp(`^Request 1: HEAD ${secure("/cookie").replace(/[.?]/g, "\\$&")} \\(302\\), \\d+ fields$`),
    );
    expect(await first.locator("table.header-fields").isVisible()).toBe(false);
    await first.locator("summary").click();
    const rows = await first
      .locator("table.header-fields tr")
      .evaluateAll((trs) => trs.map((tr) => [tr.children[0]?.textContent ?? "", tr.children[1]?.textContent ?? ""]));
    expect(rows).toEqual(
      expect.arrayContaining([
        ["location", "/c"],
        ["Set-Cookie", "sid=[redacted]"],
        ["X-Served-By", "edge-1"],
      ]),
    );
    expect(await page.locator("#result").innerText()).not.toContain("s3cr3t");
  });

  it("renders a header value as text: markup stays characters, runs nothing, adds no element", async () => {
    const page = await open();
    const title = await page.title();
    await ask(page, secure("/markup"), "Is it down?");
    const block = page.locator("#result details.response-headers").first();
    await block.locator("summary").click();
    const rows = await block
      .locator("table.header-fields tr")
      .evaluateAll((trs) =>
        trs.map((tr) => [tr.children[0]?.textContent ?? "", tr.children[1]?.textContent ?? "", tr.children[1]?.children.length ?? -1]),
      );
    expect(rows).toEqual(
      expect.arrayContaining([
        ["X-Markup", MARKUP, 0],
        ["X-Controls", CONTROLS, 0],
      ]),
    );
    expect(await page.locator("#result table.header-fields img, #result table.header-fields b").count()).toBe(0);
    expect(await page.title()).toBe(title);
  });

  it("shows the HEAD answered 405 as a request of its own, before the GET that answered in its place", async () => {
    const page = await open();
    await ask(page, secure("/no-head"), "Trace redirects");
    const { rows } = await timingTable(page);
    expect(rows.map((row) => [row[1]?.split(" ")[0], row[2]])).toEqual([
      ["HEAD", "405"],
      ["GET", "200"],
      ["GET", "200"],
    ]);
    expect(rows[0]?.[1]).toContain("HEAD, answered before the GET sent in its place");
    expect(await page.locator("#result svg.waterfall .bar.head").count()).toBe(1);
    expect(await page.locator("#result svg.waterfall .bar.hop").count()).toBe(1);
  });

  it("shows each HTTPS answer's HSTS policy and an advertised h3 in a table of its own; the http:// hop has no row", async () => {
    const page = await open();
    await ask(page, targets.url("/sts"), "Trace redirects");
    const rows = await page
      .locator("#result table.transport-table tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => (td.textContent ?? "").replace(/\s+/g, " ").trim())));
    // Request 1 is the http:// redirect; 2 is the HTTPS page's HEAD, 3 the extra GET of the final page.
    const row = (n: string) => [
      n,
      new URL(secure("/")).host,
      "max-age=86400 (1 day), includeSubDomains under 180 days",
      "advertised (not tried)",
    ];
    expect(rows).toEqual([row("2"), row("3")]);
    expect(await page.locator("#result table.transport-table .badge.warn").count()).toBe(2);
    expect(await page.locator("#result").innerText()).toContain("hsts_short");
  });
});
