/**
 * The page for people, in a real browser (Debian's Chromium, driven by
 * playwright-core) against `sitediag serve` as its own process, serving the
 * page `npm run build` writes, with loopback target sites (HTTPS with the
 * test CA, which the service trusts through SITEDIAG_CA_FILE). The browser
 * loads from loopback only: every other request would be aborted and fail
 * the test.
 *
 * SITEDIAG_UPDATE_SCREENSHOTS=1 writes the screenshots into docs/ (the ones
 * the README shows); otherwise they go to a temp dir.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { type ServeProcess } from "../fixtures/service-process.js";
import { chromiumAvailability } from "../fixtures/chromium.js";
import { askOnPage, type PageRig, startPageRig } from "../fixtures/page-rig.js";
import { sitediagArgs } from "../fixtures/built-sitediag.js";

const chromium = chromiumAvailability();
const ROOT = join(import.meta.dirname, "..", "..");
const DOCS = join(ROOT, "docs");

describe.skipIf(!chromium.available)("the page, in Chromium", () => {
  let dir: string;
  let targets: HttpTargets;
  let expired: HttpTargets;
  let service: ServeProcess;
  let key: string;
  let rig: PageRig;
  const screenshots = process.env.SITEDIAG_UPDATE_SCREENSHOTS === "1" ? DOCS : undefined;

  beforeAll(async () => {
    const pki = await getTestPki();
    targets = await startHttpTargets({ tls: pki.valid });
    const secure = (path: string) => targets.url(path, { secure: true });
    targets.route("/up", { kind: "respond", status: 200, body: "fine" });
    targets.route("/moved", { kind: "redirect", status: 301, location: secure("/up") });
    targets.route("/broken", { kind: "respond", status: 503, body: "down for maintenance" });
    targets.route("/a", { kind: "redirect", status: 301, location: secure("/b") });
    targets.route("/b", { kind: "redirect", status: 302, location: "/c" });
    targets.route("/c", { kind: "respond", status: 200, body: "landed" });
    targets.route("/hang", { kind: "hang" });
    targets.route("/refresh", { kind: "respond", status: 200, headers: { refresh: "5; url=/up" }, body: "moving" });
    expired = await startHttpTargets({ tls: pki.expired, routes: { "/": { kind: "respond", status: 200 } } });
    // What `npm start` does before serving: the service finds the page in dist/web.
    rig = await startPageRig("page", {
      SITEDIAG_TRACE_PORTS: `${targets.httpPort},${targets.httpsPort ?? 0},${expired.httpsPort ?? 0}`,
      // A running batch holds all eight slots (it runs eight items at once): the 503 test's way to a full service.
      SITEDIAG_MAX_INFLIGHT: "8",
    });
    ({ dir, service, key } = rig);
  });

  afterAll(async () => {
    await rig?.close();
    await targets?.close();
    await expired?.close();
  });

  const open = (options: Parameters<Browser["newContext"]>[0] = {}) => rig.open("/", options);

  afterEach(() => rig.settle());

  function focusedId(page: Page): Promise<string | null> {
    return page.locator(":focus").getAttribute("id");
  }

  const ask = (page: Page, url: string, button: "Is it down?" | "Trace redirects", apiKey = key) => askOnPage(page, url, button, apiKey);

  it("checks an up target: UP, the status, the redirect and the credits left", async () => {
    const page = await open();
    await ask(page, targets.url("/moved", { secure: true }), "Is it down?");
    expect(await page.locator("#result .verdict-word").textContent()).toBe("UP");
    const facts = await page.locator("#result .facts").innerText();
    expect(facts).toContain("200 OK");
    expect(facts).toContain(`301 ${targets.url("/moved", { secure: true })}`);
    expect(await page.locator("#credits").textContent()).toMatch(/^Credits left: \d+ of 300/);
    const curl = await page.locator("#curl-text").textContent();
    expect(curl).toContain(`-H "x-api-key: $KEY"`);
    expect(curl).toContain(`${service.url}/api/v1/is-site-down?url=`);
    expect(curl).not.toContain(key);
    await page.screenshot({ path: join(screenshots ?? dir, "page-check.png"), fullPage: true });
  });

  it("checks a down target: DOWN with the reason and the failed stage", async () => {
    const page = await open();
    await ask(page, targets.url("/broken", { secure: true }), "Is it down?");
    expect(await page.locator("#result .verdict-word").textContent()).toBe("DOWN");
    expect(await page.locator("#result .reason").textContent()).toBe("Server returned 503 Service Unavailable");
    expect(await page.locator("#result .stage").textContent()).toBe("Failed at the HTTP stage");
  });

  it("traces a 3-hop HTTPS chain: its status, one row per hop and the warning", async () => {
    const page = await open();
    await ask(page, targets.url("/a", { secure: true }), "Trace redirects");
    expect(await page.locator("#result .chain-status").textContent()).toBe("Redirects detected");
    const rows = page.locator("#result table.hops tbody tr");
    expect(await rows.count()).toBe(3);
    expect(await rows.nth(0).innerText()).toContain("301 Moved Permanently");
    expect(await rows.nth(1).innerText()).toContain("302 Found");
    expect(await rows.nth(2).innerText()).toContain("200 OK");
    expect(await page.locator("#result .warnings").innerText()).toContain("temporary_redirect");
    await page.screenshot({ path: join(screenshots ?? dir, "page-trace.png"), fullPage: true });
  });

  it("draws the trace's waterfall, one bar per hop (and one for the read of the final page), and shows the certificate", async () => {
    const page = await open();
    await ask(page, targets.url("/a", { secure: true }), "Trace redirects");
    const hops = page.locator("#result svg.waterfall .bar.hop");
    expect(await hops.count()).toBe(3);
    // Each bar has its phases, each with its number on hover.
    expect(await hops.first().locator("rect.phase-tls title").textContent()).toMatch(/^Request 1, TLS: \d/);
    expect(await hops.nth(2).locator("title").first().textContent()).toMatch(
      new RegExp(`^Request 3: HEAD ${targets.url("/c", { secure: true })}, `),
    );
    // The chain ended on a 2xx page: with details, the service read it once more (GET) for a client-side redirect.
    expect(await page.locator("#result svg.waterfall .bar").count()).toBe(4);
    expect(await page.locator("#result svg.waterfall .bar.page-read title").first().textContent()).toMatch(
      /^Request 4: GET .*\/c, to read the final page for a client-side redirect/,
    );
    const timingRows = page.locator("#result table.timings tbody tr");
    expect(await timingRows.count()).toBe(4);
    // The redirects stay on one origin of a keep-alive server: the later hops ride the first one's connection, and say so.
    const connectCells = await Promise.all([0, 1, 2].map(async (row) => (await timingRows.nth(row).locator("td, th").allInnerTexts())[4]));
    expect(connectCells[0]).toMatch(/ms$/);
    expect(connectCells.slice(1)).toEqual(["reused", "reused"]);
    expect(await hops.nth(1).locator("title").first().textContent()).toContain("on the previous request's connection");
    // One host showing one certificate to every request: one row naming them.
    const certificates = page.locator("#result table.certificate-table tbody tr");
    expect(await certificates.count()).toBe(1);
    const certificate = await certificates.first().locator("td").allInnerTexts();
    expect(certificate.slice(0, 4)).toEqual([
      "1, 2, 3, 4",
      `127.0.0.1:${targets.httpsPort}`,
      "localhost",
      "sitediag test CA, sitediag tests",
    ]);
    expect(certificate[5]).toBe("valid");
    expect(certificate[6]).toMatch(/^TLSv1\.[23]/);
  });

  it("shows an expired certificate: DOWN at the TLS stage, the failed request marked, the certificate flagged", async () => {
    const page = await open();
    await ask(page, expired.url("/", { secure: true }), "Is it down?");
    expect(await page.locator("#result .verdict-word").textContent()).toBe("DOWN");
    expect(await page.locator("#result .reason").textContent()).toBe("TLS certificate has expired");
    expect(await page.locator("#result .facts").innerText()).toContain("tls_certificate_expired");
    expect(await page.locator("#result svg.waterfall .bar.failed rect.phase-failed").count()).toBe(1);
    const certificate = await page.locator("#result table.certificate-table tbody tr").first().locator("td").allInnerTexts();
    expect(certificate[4]).toMatch(/^2021-01-01/);
    expect(certificate[5]).toBe("TLS certificate has expired");
  });

  it("reports a client-side redirect it did not follow", async () => {
    const page = await open();
    await ask(page, targets.url("/refresh", { secure: true }), "Is it down?");
    expect(await page.locator("#result .verdict-word").textContent()).toBe("UP");
    expect(await page.locator("#result .facts").innerText()).toContain(
      `Refresh header to ${targets.url("/up", { secure: true })} after 5 s (not followed)`,
    );
  });

  it("says the key was not accepted (401)", async () => {
    const page = await open();
    await ask(page, targets.url("/up", { secure: true }), "Is it down?", "sd_not-a-key");
    expect(await page.getByRole("alert").innerText()).toContain("401: the API key was not accepted");
    expect(await page.locator("#result").innerText()).toBe("");
  });

  it("says when the credits run out (429), with when to try again, and what is left", async () => {
    // A key of its own with room for one check (2 credits) and not a second.
    const created = await promisify(execFile)(process.execPath, sitediagArgs("keys", "create", "--name", "small", "--budget", "3"), {
      env: { PATH: process.env.PATH ?? "", SITEDIAG_STORE: `sqlite:${join(dir, "keys.db")}` },
    });
    const small = created.stdout.trim();
    const page = await open();
    await ask(page, targets.url("/up", { secure: true }), "Is it down?", small);
    expect(await page.locator("#credits").textContent()).toMatch(/^Credits left: 1 of 3;/);
    await page.getByRole("button", { name: "Is it down?" }).click();
    await page.getByRole("alert").getByText("429").waitFor();
    const alert = await page.getByRole("alert").innerText();
    expect(alert).toContain("429: not enough credits left");
    expect(alert).toMatch(/Try again after \d{4}-\d\d-\d\d \d\d:\d\d \(in \d+ (h|min)( \d+ min)?\)/);
    expect(await page.locator("#credits").textContent()).toMatch(/^Credits left: 1 of 3;/);
  });

  it("says why a URL was refused (400) with the service's reason", async () => {
    const page = await open();
    await ask(page, "ftp://127.0.0.1/file", "Is it down?");
    const alert = await page.getByRole("alert").innerText();
    expect(alert).toContain("400: the request was refused");
    expect(alert).toMatch(/http/i);
  });

  it("keeps the URL in the address bar, never the key; a reload fills the field", async () => {
    const page = await open();
    const target = targets.url("/up", { secure: true });
    await ask(page, target, "Is it down?");
    expect(new URL(page.url()).hash).toBe(`#url=${encodeURIComponent(target)}`);
    expect(page.url()).not.toContain(key);
    await page.reload();
    expect(await page.getByLabel("URL or domain").inputValue()).toBe(target);
    // Not remembered: the key is gone with the page.
    expect(await page.getByLabel("API key").inputValue()).toBe("");
    expect(page.url()).not.toContain(key);
  });

  it("remembers the key only when asked, in localStorage", async () => {
    const page = await open();
    await page.getByLabel("Remember the key in this browser").check();
    await ask(page, targets.url("/up", { secure: true }), "Is it down?");
    await page.reload();
    expect(await page.getByLabel("API key").inputValue()).toBe(key);
    await page.getByLabel("Remember the key in this browser").uncheck();
    expect(await page.evaluate("window.localStorage.length")).toBe(0);
  });

  it("works from the keyboard alone: Tab to each field, Enter submits", async () => {
    const page = await open();
    await page.keyboard.press("Tab");
    expect(await focusedId(page)).toBe("tab-single");
    await page.keyboard.press("Tab");
    expect(await focusedId(page)).toBe("key");
    await page.keyboard.type(key);
    await page.keyboard.press("Tab");
    expect(await focusedId(page)).toBe("remember");
    await page.keyboard.press("Tab");
    expect(await focusedId(page)).toBe("url");
    await page.keyboard.type(targets.url("/up", { secure: true }));
    await page.keyboard.press("Enter");
    await page.locator("#result .verdict-word").waitFor();
    expect(await page.locator("#result .verdict-word").textContent()).toBe("UP");
    // The trace is one Tab and a Space away.
    await page.getByLabel("URL or domain").focus();
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await page.locator(":focus").textContent()).toBe("Trace redirects");
    await page.keyboard.press("Space");
    await page.locator("#result .chain-status").waitFor();
  });

  it("fits a phone-width screen: nothing wider than the viewport but the tables' own scrolling", async () => {
    const page = await open({ viewport: { width: 375, height: 812 } });
    await ask(page, targets.url("/a", { secure: true }), "Trace redirects");
    const overflow = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth");
    expect(overflow).toBeLessThanOrEqual(0);
  });

  describe("the Batch tab", () => {
    async function openBatch(): Promise<Page> {
      const page = await open();
      await page.getByRole("tab", { name: "Batch" }).click();
      await page.getByLabel("API key").fill(key);
      return page;
    }

    function cells(page: Page, row: number): Promise<string[]> {
      return page.locator("#batch-rows tr").nth(row).locator("td").allInnerTexts();
    }

    it("checks pasted URLs as they stream in, filters to failures, and downloads the results as CSV", async () => {
      const page = await openBatch();
      const up = targets.url("/up", { secure: true });
      const broken = targets.url("/broken", { secure: true });
      await page.getByLabel("URLs, one per line").fill([up, broken, "ftp://127.0.0.1/file"].join("\n"));
      // From the keyboard: Ctrl+Enter in the text area runs "Check all".
      await page.getByLabel("URLs, one per line").press("Control+Enter");
      await page.getByRole("status").getByText("Done: 3 of 3, 2 failed.").waitFor();
      expect(await cells(page, 0)).toEqual(["1 ▸", "PASS", up, "200", up, "1", ""]);
      expect((await cells(page, 1)).slice(1, 5)).toEqual(["FAIL", broken, "503", broken]);
      expect((await cells(page, 1))[6]).toMatch(/^down: Server returned 503 Service Unavailable/);
      expect((await cells(page, 2))[6]).toMatch(/^not checked: .+ input_scheme$/);
      expect(await page.locator("#credits").textContent()).toMatch(/^Credits left: \d+ of 300/);
      // docs/page-batch.png is page-batch.test.ts's now (a failed row opened); this one stays in the temp dir.
      await page.screenshot({ path: join(dir, "page-batch-check.png"), fullPage: true });

      await page.getByLabel("Show failures only").check();
      expect(await page.locator("#batch-rows tr:visible").count()).toBe(2);

      const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download CSV" }).click()]);
      expect(download.suggestedFilename()).toBe("sitediag-batch.csv");
      const csv = readFileSync(await download.path(), "utf8").split("\r\n");
      expect(csv[0]).toBe("index,url,expected_final_url,max_redirects,verdict,code,reason,final_status,final_url,hops,chain");
      expect(csv[1]).toBe(`1,${up},,,PASS,,,200,${up},1,200 ${up}`);
      expect(csv[2]).toMatch(
        new RegExp(`^2,${broken},,,FAIL,\\w+,down: Server returned 503 Service Unavailable,503,${broken},1,503 ${broken}$`),
      );
      expect(csv).toHaveLength(5);
    });

    it("traces a two-column CSV and says which chains met their expected final URL", async () => {
      const page = await openBatch();
      const lines = [
        "url,expected",
        `${targets.url("/moved", { secure: true })},${targets.url("/up", { secure: true })}`,
        `${targets.url("/a", { secure: true })},${targets.url("/c", { secure: true })}`,
      ];
      await page.getByLabel("URLs, one per line").fill(lines.join("\n"));
      await page.getByRole("button", { name: "Trace all" }).click();
      await page.getByRole("status").getByText("Done: 2 of 2, 1 failed.").waitFor();
      const moved = await cells(page, 0);
      expect(moved[1]).toBe("PASS");
      expect(moved[6]).toBe("ends at the expected final URL");
      const temporary = await cells(page, 1);
      expect(temporary[1]).toBe("FAIL");
      expect(temporary[6]).toMatch(/^expectation not met: .+ expectation_not_met$/);
    });

    it("stops a running batch: the finished rows stay, the rest never arrive", async () => {
      const page = await openBatch();
      await page
        .getByLabel("URLs, one per line")
        .fill([targets.url("/up", { secure: true }), targets.url("/hang", { secure: true })].join("\n"));
      await page.getByRole("button", { name: "Check all" }).click();
      await page.locator("#batch-rows tr.passed").waitFor();
      await page.getByRole("button", { name: "Stop" }).click();
      await page.getByRole("status").getByText("Stopped: 1 of 2 done.").waitFor();
      expect((await cells(page, 1)).slice(1, 2)).toEqual(["NOT RUN"]);
      expect((await cells(page, 1))[6]).toBe("stopped before it ran");
      expect(await page.getByRole("button", { name: "Check all" }).isEnabled()).toBe(true);
    });

    it("is reached from the keyboard: arrow keys move between the tabs, Enter in the key field runs the batch", async () => {
      const page = await open();
      await page.keyboard.press("Tab");
      await page.keyboard.press("ArrowRight");
      expect(await focusedId(page)).toBe("tab-batch");
      expect(await page.getByRole("tab", { name: "Batch" }).getAttribute("aria-selected")).toBe("true");
      expect(await page.locator("#panel-single").isHidden()).toBe(true);
      await page.keyboard.press("Tab");
      expect(await focusedId(page)).toBe("key");
      await page.keyboard.type(key);
      await page.keyboard.press("Tab");
      await page.keyboard.press("Tab");
      expect(await focusedId(page)).toBe("batch-input");
      await page.keyboard.type(targets.url("/up", { secure: true }));
      await page.getByLabel("API key").focus();
      await page.keyboard.press("Enter");
      await page.getByRole("status").getByText("Done: 1 of 1, 0 failed.").waitFor();
      await page.getByRole("tab", { name: "Batch" }).focus();
      await page.keyboard.press("Home");
      expect(await page.locator("#panel-single").isVisible()).toBe(true);
    });

    it("while a batch fills the service, a check in the other tab says it is unavailable (503) and when to retry", async () => {
      const page = await openBatch();
      await page.getByLabel("URLs, one per line").fill(targets.url("/hang", { secure: true }));
      await page.getByRole("button", { name: "Check all" }).click();
      await page.getByRole("status").getByText("Checking: 0 of 1 done").waitFor();
      await page.getByRole("tab", { name: "One URL" }).click();
      await ask(page, targets.url("/up", { secure: true }), "Is it down?");
      const alert = await page.getByRole("alert").innerText();
      expect(alert).toContain("503: the service is unavailable");
      expect(alert).toMatch(/retry in \d+ seconds \(nothing was charged\)/);
      await page.getByRole("tab", { name: "Batch" }).click();
      await page.getByRole("button", { name: "Stop" }).click();
      await page.getByRole("status").getByText("Stopped: 0 of 1 done.").waitFor();
    });

    it("refuses more than 100 URLs before sending anything", async () => {
      const page = await openBatch();
      const many = Array.from({ length: 101 }, (_, i) => targets.url(`/up?${i}`, { secure: true }));
      await page.getByLabel("URLs, one per line").fill(many.join("\n"));
      await page.getByRole("button", { name: "Check all" }).click();
      expect(await page.getByRole("alert").innerText()).toContain("101 URLs: a batch takes at most 100.");
    });
  });
});
