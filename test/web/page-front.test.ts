/**
 * What a person meets first on the page, in Chromium against `sitediag serve`
 * (the setup of page.test.ts): a bare domain typed in, a new question asked
 * while an old answer is shown (dimmed, a clock, Cancel), a shared link that
 * keeps its operation, and a trace read at 1280 px and at 390 px with nothing
 * clipped.
 */
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { chromiumAvailability } from "../fixtures/chromium.js";
import { askOnPage, type PageRig, startPageRig } from "../fixtures/page-rig.js";

const chromium = chromiumAvailability();
const ROOT = join(import.meta.dirname, "..", "..");

describe.skipIf(!chromium.available)("the page's front, in Chromium", () => {
  let targets: HttpTargets;
  let expired: HttpTargets;
  let key: string;
  let rig: PageRig;

  beforeAll(async () => {
    const pki = await getTestPki();
    targets = await startHttpTargets({ tls: pki.valid });
    const secure = (path: string) => targets.url(path, { secure: true });
    targets.route("/up", { kind: "respond", status: 200, body: "fine" });
    targets.route("/broken", { kind: "respond", status: 503, body: "down for maintenance" });
    targets.route("/hang", { kind: "hang" });
    targets.route("/a", { kind: "redirect", status: 301, location: secure("/b") });
    targets.route("/b", { kind: "redirect", status: 302, location: "/c" });
    targets.route("/c", { kind: "respond", status: 200, body: "landed" });
    expired = await startHttpTargets({ tls: pki.expired, routes: { "/": { kind: "respond", status: 200 } } });
    // A migration's chain as people meet it: http to https, a long path, a language redirect, an expired certificate last.
    const long = "/en/products/garden-furniture/outdoor-dining-sets/teak-extendable-table-with-six-chairs";
    targets.route("/old-shop/garden/tables", {
      kind: "redirect",
      status: 301,
      location: secure("/shop/garden/tables?utm_source=newsletter&utm_campaign=spring"),
    });
    targets.route("/shop/garden/tables", { kind: "redirect", status: 302, location: secure(long) });
    targets.route(long, { kind: "redirect", status: 301, location: expired.url("/", { secure: true }) });
    // A hop a second or more long: its time is the widest a hop's time cell holds ("1234.5 ms").
    targets.route("/slow-hop", { kind: "delayed", delayMs: 1100, then: { kind: "redirect", status: 301, location: "/c" } });
    rig = await startPageRig("page-front", {
      SITEDIAG_TRACE_PORTS: `${targets.httpPort},${targets.httpsPort ?? 0},${expired.httpsPort ?? 0}`,
      SITEDIAG_CREDIT_BUDGET: "10000",
    });
    ({ key } = rig);
  });

  afterAll(async () => {
    await rig?.close();
    await targets?.close();
    await expired?.close();
  });

  async function open(path = "/", viewport = { width: 1100, height: 900 }): Promise<Page> {
    const page = await rig.open(path, { viewport });
    await page.getByLabel("API key").fill(key);
    return page;
  }

  afterEach(() => rig.settle());

  async function answered(page: Page): Promise<void> {
    await page.locator('#result[aria-busy="false"]').waitFor({ state: "attached" });
  }

  // open() has filled the key already.
  const ask = (page: Page, url: string, button: "Is it down?" | "Trace redirects") => askOnPage(page, url, button);

  describe("a bare domain", () => {
    it("is checked from https:// on Enter (“Is it down?”), and the URL checked is shown", async () => {
      const page = await open();
      const bare = `127.0.0.1:${targets.httpsPort ?? 0}/up`;
      await page.getByLabel("URL or domain").fill(bare);
      await page.getByLabel("URL or domain").press("Enter");
      await answered(page);
      expect(await page.getByRole("alert").innerText()).toBe("");
      expect(await page.locator("#result .verdict-word").textContent()).toBe("UP");
      expect(await page.locator("#result .facts").innerText()).toContain(`https://${bare}`);
      expect(await page.locator("#curl-text").textContent()).toContain(encodeURIComponent(`https://${bare}`));
      expect(await page.locator("#url-help").textContent()).toContain("A bare domain (example.com) is checked from https://");
    });

    it("is traced from https:// too, the same URL in the address bar", async () => {
      const page = await open();
      const bare = `127.0.0.1:${targets.httpsPort ?? 0}/a`;
      await ask(page, bare, "Trace redirects");
      expect(await page.locator("#result .chain-status").textContent()).toBe("Redirects detected");
      expect(new URL(page.url()).hash).toBe(`#url=${encodeURIComponent(`https://${bare}`)}&op=trace`);
    });
  });

  describe("a new question while an answer is shown", () => {
    it("dims the old answer, shows the time taken so far, and Cancel aborts the call", async () => {
      const page = await open();
      await ask(page, targets.url("/broken", { secure: true }), "Is it down?");
      expect(await page.locator("#result .verdict-word").textContent()).toBe("DOWN");
      expect(await page.locator("#cancel").isVisible()).toBe(false);
      expect(await page.locator("#elapsed").textContent()).toMatch(/^\d+\.\d s$/);

      await page.getByLabel("URL or domain").fill(targets.url("/hang", { secure: true }));
      await page.getByRole("button", { name: "Is it down?" }).click();
      await page.locator('#result[aria-busy="true"]').waitFor({ state: "attached" });
      expect(Number(await page.evaluate("getComputedStyle(document.getElementById('result')).opacity"))).toBeLessThan(0.6);
      expect(await page.locator("#status").textContent()).toBe(`Checking ${targets.url("/hang", { secure: true })}…`);
      const first = await page.locator("#elapsed").textContent();
      await expect.poll(() => page.locator("#elapsed").textContent(), { timeout: 5_000 }).not.toBe(first);
      expect(await page.locator("#elapsed").textContent()).toMatch(/^\d+\.\d s$/);

      await page.getByRole("button", { name: "Cancel" }).click();
      await answered(page);
      expect(await page.locator("#status").textContent()).toMatch(/^Cancelled after \d+\.\d s: .*\/hang was not checked to the end\.$/);
      expect(await page.locator("#result").innerText()).toBe("");
      expect(await page.evaluate("getComputedStyle(document.getElementById('result')).opacity")).toBe("1");
      expect(await page.locator("#cancel").isVisible()).toBe(false);
      expect(await page.getByRole("button", { name: "Is it down?" }).isEnabled()).toBe(true);
      expect(await page.getByRole("alert").innerText()).toBe("");
    });

    it("cancels with Escape as well, and the next question runs as usual", async () => {
      const page = await open();
      await page.getByLabel("URL or domain").fill(targets.url("/hang", { secure: true }));
      await page.getByRole("button", { name: "Trace redirects" }).click();
      await page.locator("#cancel").waitFor({ state: "visible" });
      await page.keyboard.press("Escape");
      await answered(page);
      expect(await page.locator("#status").textContent()).toMatch(/was not traced to the end\.$/);
      await ask(page, targets.url("/up", { secure: true }), "Is it down?");
      expect(await page.locator("#result .verdict-word").textContent()).toBe("UP");
    });
  });

  describe("a shared link", () => {
    it("keeps the operation: a trace's link opens as a trace, and Enter runs it", async () => {
      const target = targets.url("/a", { secure: true });
      const page = await open(`/#url=${encodeURIComponent(target)}&op=trace`);
      expect(await page.getByLabel("URL or domain").inputValue()).toBe(target);
      expect(await page.locator("#url-help").textContent()).toContain("Enter runs “Trace redirects”");
      await page.getByLabel("URL or domain").press("Enter");
      await answered(page);
      expect(await page.locator("#result .chain-status").textContent()).toBe("Redirects detected");
      expect(new URL(page.url()).hash).toBe(`#url=${encodeURIComponent(target)}&op=trace`);
    });

    it("keeps a check a check: its link is the URL alone, and Enter checks", async () => {
      const target = targets.url("/up", { secure: true });
      const page = await open();
      await ask(page, target, "Is it down?");
      expect(new URL(page.url()).hash).toBe(`#url=${encodeURIComponent(target)}`);
      await page.reload();
      await page.getByLabel("API key").fill(key);
      expect(await page.locator("#url-help").textContent()).toContain("Enter runs “Is it down?”");
      await page.getByLabel("URL or domain").press("Enter");
      await answered(page);
      expect(await page.locator("#result .verdict-word").textContent()).toBe("UP");
    });
  });

  describe("a trace, read at a desktop's and a phone's width", () => {
    const screenshots = process.env.SITEDIAG_UPDATE_SCREENSHOTS === "1" ? join(ROOT, "docs") : join(tmpdir(), "sitediag-page-front-shots");

    /** Every table cell whose content is wider than the cell shows (cut off), and every table box that scrolls. */
    function clipped(page: Page): Promise<{ cells: string[]; scrolling: string[]; page: number }> {
      return page.evaluate(`({
        cells: [...document.querySelectorAll("#result td, #result th")]
          .filter((cell) => cell.scrollWidth > cell.clientWidth + 1)
          .map((cell) => cell.closest("table").className + ": " + cell.textContent),
        scrolling: [...document.querySelectorAll("#result .table-scroll")]
          .filter((box) => box.scrollWidth > box.clientWidth + 1)
          .map((box) => box.querySelector("table").className),
        page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      })`);
    }

    /** The rendered size, in CSS pixels, of the waterfall's smallest label. */
    function smallestLabelPx(page: Page): Promise<number> {
      return page.evaluate(`Math.min(...[...document.querySelectorAll("#result svg.waterfall text")]
        .map((text) => text.getScreenCTM().a * Number.parseFloat(getComputedStyle(text).fontSize)))`);
    }

    async function traceMigration(width: number, height: number): Promise<Page> {
      const page = await open("/", { width, height });
      await ask(page, targets.url("/old-shop/garden/tables"), "Trace redirects");
      expect(await page.locator("#result table.hops tbody tr").count()).toBe(3);
      return page;
    }

    it("at 1280 px: no cell cut off, no table scrolling (the Total column, the certificate's state), labels of 11 px or more", async () => {
      const page = await traceMigration(1280, 900);
      mkdirSync(screenshots, { recursive: true });
      await page.screenshot({ path: join(screenshots, "page-trace-1280.png"), fullPage: true });
      expect(await clipped(page)).toEqual({ cells: [], scrolling: [], page: 0 });
      expect(await page.locator("#result table.timings th").allInnerTexts()).toContain("Total");
      expect(await smallestLabelPx(page)).toBeGreaterThanOrEqual(11);
    });

    it("at 390 px: the page does not scroll sideways, the hops' URLs are on screen, labels of 11 px or more", async () => {
      const page = await traceMigration(390, 844);
      mkdirSync(screenshots, { recursive: true });
      await page.screenshot({ path: join(screenshots, "page-trace-390.png"), fullPage: true });
      await page.locator("#result article.trace").screenshot({ path: join(tmpdir(), "sitediag-page-front-shots", "trace-390-result.png") });
      const result = await clipped(page);
      expect(result.page).toBeLessThanOrEqual(0);
      expect(result.cells).toEqual([]);
      // Every URL of the hops table lies within the screen's width, whole.
      const outside = await page.evaluate(`[...document.querySelectorAll("#result table.hops td .url")]
        .filter((url) => url.getBoundingClientRect().left < 0 || url.getBoundingClientRect().right > window.innerWidth).length`);
      expect(outside).toBe(0);
      expect(await smallestLabelPx(page)).toBeGreaterThanOrEqual(11);
    });

    it("at 390 px: a hop of a second or more shows its whole time, not cut off", async () => {
      const page = await open("/", { width: 390, height: 844 });
      await ask(page, targets.url("/slow-hop"), "Trace redirects");
      const times = await page.locator("#result table.hops tbody td:nth-child(6)").allInnerTexts();
      expect(times[0]).toMatch(/^\d{4}\.\d ms$/);
      const result = await clipped(page);
      expect(result.page).toBeLessThanOrEqual(0);
      expect(result.cells).toEqual([]);
    });

    it("names a certificate's verification error in words, the code on hover", async () => {
      const page = await traceMigration(1280, 900);
      const badge = page.locator("#result table.certificate-table .badge.bad").first();
      expect(await badge.innerText()).toBe("TLS certificate has expired");
      expect(await badge.getAttribute("title")).toBe("CERT_HAS_EXPIRED (tls_certificate_expired)");
    });
  });
});
