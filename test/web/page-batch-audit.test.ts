/**
 * Issue 39, a migration audit in the Batch tab, in Chromium against `sitediag
 * serve` (the setup of page-batch.test.ts): a batch larger than the key's
 * credits is weighed before anything is sent (GET /api/v1/credits, free), its
 * first rows that fit are offered and the rest run later from the same table;
 * a chain-length limit for the batch and per row; failures counted by code;
 * refusals named by their input_* code and left out of a re-run unless asked;
 * a failed row's banner not green; at 390 px every row's verdict, reason and
 * final URL in view without a sideways scroll.
 *
 * SITEDIAG_UPDATE_SCREENSHOTS=1 writes docs/page-batch-phone.png (the audit at 390 px).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { chromiumAvailability } from "../fixtures/chromium.js";
import { type PageRig, startPageRig } from "../fixtures/page-rig.js";

const chromium = chromiumAvailability();
const DOCS = join(import.meta.dirname, "..", "..", "docs");
const screenshots = process.env.SITEDIAG_UPDATE_SCREENSHOTS === "1" ? DOCS : undefined;

describe.skipIf(!chromium.available)("a migration audit in the Batch tab, in Chromium", () => {
  let targets: HttpTargets;
  const secure = (path: string) => targets.url(path, { secure: true });

  beforeAll(async () => {
    const pki = await getTestPki();
    targets = await startHttpTargets({ tls: pki.valid });
    targets.route("/r3", { kind: "redirect", status: 301, location: secure("/r2") });
    targets.route("/r2", { kind: "redirect", status: 301, location: secure("/r1") });
    targets.route("/r1", { kind: "redirect", status: 301, location: secure("/en/") });
    targets.route("/temp", { kind: "redirect", status: 302, location: secure("/en/") });
    targets.route("/en/", { kind: "respond", status: 200, body: "home" });
    targets.route("/shop", { kind: "respond", status: 503, body: "down for maintenance" });
  });

  afterAll(async () => {
    await targets?.close();
  });

  function cells(page: Page, row: number): Promise<string[]> {
    return page.locator("#batch-rows tr:not(.batch-detail)").nth(row).locator("td").allInnerTexts();
  }

  async function openBatch(rig: PageRig, width = 1280): Promise<Page> {
    const page = await rig.open("/", { viewport: { width, height: 900 } });
    await page.getByRole("tab", { name: "Batch" }).click();
    await page.getByLabel("API key").fill(rig.key);
    return page;
  }

  describe("on a key of 50 credits", () => {
    let rig: PageRig;
    beforeAll(async () => {
      rig = await startPageRig("page-batch-budget", { SITEDIAG_TRACE_PORTS: String(targets.httpsPort ?? 0), SITEDIAG_CREDIT_BUDGET: "50" });
    });
    afterAll(async () => rig?.close());
    afterEach(() => rig.settle());

    it("reads the credits first, sends nothing that does not fit, traces the first rows that do, and runs the rest later from the same table", async () => {
      const page = await openBatch(rig);
      const asked = () => targets.requests.filter((request) => request.target.startsWith("/en/?row=")).length;
      const before = asked();
      await page.getByLabel("URLs, one per line").fill(Array.from({ length: 14 }, (_, i) => secure(`/en/?row=${i + 1}`)).join("\n"));
      await page.getByRole("button", { name: "Trace all" }).click();
      await page.getByRole("status").getByText("Not run: 14 traces cost 70 credits; this key has 50 of 50 left, enough for 10.").waitFor();
      expect(asked()).toBe(before);
      // More than the whole budget: no wait makes the batch fit, and the page says what an operator can do.
      expect(await page.locator("#batch-offer").innerText()).toContain(
        "10 of these 14 rows fit now. At most 10 traces fit the key's whole budget of 50: run the rest later from this table, or an operator can raise the budget (sitediag keys set-budget KEY_ID N).",
      );
      expect((await cells(page, 13)).slice(1, 2)).toEqual(["NOT RUN"]);
      expect((await cells(page, 13))[6]).toBe("over the budget: the key's 50 credits left pay for 10 traces");
      // Nothing was refused: the alert is empty, and no retry is promised.
      expect(await page.locator("#batch-problem").innerText()).toBe("");

      await page.getByRole("button", { name: "Trace the first 10 now" }).click();
      await page.getByRole("status").getByText("Done: 10 of 10, 0 failed.").waitFor();
      expect((await cells(page, 9)).slice(1, 2)).toEqual(["PASS"]);
      expect((await cells(page, 10)).slice(1, 2)).toEqual(["NOT RUN"]);
      expect(asked()).toBeGreaterThanOrEqual(before + 10);

      // The four left run later from the same table; now nothing fits, and the page says so instead of sending them.
      const sent = asked();
      await page.getByRole("button", { name: "Trace the 4 rows not run" }).click();
      await page.getByRole("status").getByText("Not run: 4 traces cost 20 credits; this key has 0 of 50 left, enough for 0.").waitFor();
      expect(await page.getByRole("button", { name: /^Trace the first/ }).count()).toBe(0);
      expect(await page.locator("#batch-offer").innerText()).toMatch(
        /Run the rest later from this table: credits start to free up at \d\d:\d\d\./,
      );
      expect((await cells(page, 0)).slice(1, 2)).toEqual(["PASS"]);
      expect(asked()).toBe(sent);
    });
  });

  describe("on a key of 300 credits", () => {
    let rig: PageRig;
    beforeAll(async () => {
      rig = await startPageRig("page-batch-audit", { SITEDIAG_TRACE_PORTS: String(targets.httpsPort ?? 0) });
    });
    afterAll(async () => rig?.close());
    afterEach(() => rig.settle());

    it("holds chains to the batch's and a row's max redirects, counts failures by code, names refusals by code and re-runs them only when asked", async () => {
      const page = await openBatch(rig);
      const lines = [
        "url,expected_final_url,max_redirects",
        `${secure("/r3")},${secure("/en/")},`,
        `${secure("/r3")},${secure("/en/")},3`,
        `${secure("/temp")},${secure("/en/")},`,
        `${secure("/shop")},,`,
        `https://10.0.0.1:${targets.httpsPort ?? 0}/old,,`,
        "not a url,,",
      ];
      await page.getByLabel("URLs, one per line").fill(lines.join("\n"));
      await page.getByLabel("Max redirects per trace").fill("2");
      await page.getByRole("button", { name: "Trace all" }).click();
      await page.getByRole("status").getByText("Done: 6 of 6, 5 failed.").waitFor();

      expect(await cells(page, 0)).toEqual([
        "1 ▸",
        "FAIL",
        secure("/r3"),
        "200",
        secure("/en/"),
        "4",
        "3 redirects, more than the 2 allowed chain_too_long",
      ]);
      expect((await cells(page, 1)).slice(0, 2)).toEqual(["2 ▸", "PASS"]);
      expect((await cells(page, 2))[6]).toMatch(/^expectation not met: .+ expectation_not_met$/);
      expect((await cells(page, 4))[6]).toMatch(/^not traced: .+ input_non_public_address$/);
      expect((await cells(page, 5))[6]).toMatch(/^not traced: .+ input_invalid_url$/);
      expect(await page.locator("#batch-summary").innerText()).toBe(
        "Failures by code: 1 chain_too_long, 1 expectation_not_met, 1 final_status_error, 1 input_invalid_url, 1 input_non_public_address",
      );

      // A failed row's chain banner ("Redirects detected") is not green: the row failed by the batch's rule.
      await page.getByRole("button", { name: "Row 3: show its chain" }).click();
      const banner = page.locator("#batch-rows tr.batch-detail .verdict");
      expect(await banner.innerText()).toContain("Redirects detected");
      const colours = `(() => { const style = getComputedStyle(document.querySelector("#batch-rows tr.batch-detail .verdict")); return [style.backgroundColor, style.color]; })()`;
      expect(await page.evaluate(colours)).toEqual(["rgb(252, 232, 230)", "rgb(179, 38, 30)"]);
      await page.getByRole("button", { name: "Row 2: show its chain" }).click();
      expect(await page.evaluate(colours)).toEqual(["rgb(230, 244, 234)", "rgb(19, 115, 51)"]);
      await page.getByRole("button", { name: "Row 2: show its chain" }).click();

      const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download CSV" }).click()]);
      const csv = readFileSync(await download.path(), "utf8").split("\r\n");
      expect(csv[0]).toBe("index,url,expected_final_url,max_redirects,verdict,code,reason,final_status,final_url,hops,chain");
      expect(csv[1]).toMatch(/^1,\S+,\S+,2,FAIL,chain_too_long,/);
      expect(csv[2]).toMatch(/^2,\S+,\S+,3,PASS,/);
      expect(csv[6]).toMatch(/^6,not a url,,2,FAIL,input_invalid_url,/);

      // Rows refused at input cannot trace as written: a re-run leaves them out unless asked.
      expect(await page.locator("#batch-rerun").innerText()).toBe("Re-run 3 rows that did not pass");
      await page.getByLabel("Include rows refused at input").check();
      expect(await page.locator("#batch-rerun").innerText()).toBe("Re-run 5 rows that did not pass");
      await page.getByLabel("Include rows refused at input").uncheck();
      await page.getByRole("button", { name: "Re-run 3 rows that did not pass" }).click();
      await page.getByRole("status").getByText("Done: 3 of 3, 3 failed.").waitFor();
      expect((await cells(page, 4))[6]).toMatch(/input_non_public_address$/);
    });

    it("at 390 px shows each row's verdict, reason and final URL with no sideways scroll", async () => {
      const page = await openBatch(rig, 390);
      const lines = [
        `${secure("/r3")},${secure("/en/")}`,
        `${secure("/shop")}?a-long-query-string=that-would-widen-a-column-${"x".repeat(40)}`,
        `${secure("/temp")},${secure("/en/")}`,
        "not a url",
      ];
      await page.getByLabel("URLs, one per line").fill(lines.join("\n"));
      await page.getByRole("button", { name: "Trace all" }).click();
      await page.getByRole("status").getByText("Done: 4 of 4, 3 failed.").waitFor();
      const width = Number(await page.evaluate("document.documentElement.clientWidth"));
      expect(Number(await page.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(width);
      const table = page.locator("#batch-result .table-scroll");
      expect(
        await table.evaluate((element: { scrollWidth: number; clientWidth: number }) => element.scrollWidth - element.clientWidth),
      ).toBe(0);
      for (let row = 0; row < 4; row++) {
        for (const cell of [2, 5, 7]) {
          const box = await page.locator("#batch-rows tr:not(.batch-detail)").nth(row).locator(`td:nth-child(${cell})`).boundingBox();
          if (box === null) throw new Error(`row ${row + 1} cell ${cell} is not shown`);
          expect(box.x, `row ${row + 1} cell ${cell}`).toBeGreaterThanOrEqual(0);
          expect(box.x + box.width, `row ${row + 1} cell ${cell}`).toBeLessThanOrEqual(width);
        }
      }
      expect(await page.locator("#batch-rows tr:not(.batch-detail)").nth(1).locator("td:nth-child(7)").innerText()).toContain(
        "final_status_error",
      );
      await page.screenshot({ path: join(screenshots ?? rig.dir, "page-batch-phone.png"), fullPage: true });
    });
  });
});
