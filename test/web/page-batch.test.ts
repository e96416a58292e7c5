/**
 * The Batch tab as a migration audit uses it, in Chromium against `sitediag
 * serve` (the setup of page.test.ts): every row PASS or FAIL with its reason
 * and code, by the rule the CLI and the CSV share; a row opened to its chain
 * and waterfall; failures only; a re-run of only the rows that need a look;
 * the cost said before running, and a batch larger than the key's credits
 * not sent, its rows marked NOT RUN over the budget.
 *
 * SITEDIAG_UPDATE_SCREENSHOTS=1 writes docs/page-batch.png (a failed row opened).
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

describe.skipIf(!chromium.available)("the Batch tab, in Chromium", () => {
  let dir: string;
  let targets: HttpTargets;
  let key: string;
  let rig: PageRig;
  const screenshots = process.env.SITEDIAG_UPDATE_SCREENSHOTS === "1" ? DOCS : undefined;
  const secure = (path: string) => targets.url(path, { secure: true });

  beforeAll(async () => {
    const pki = await getTestPki();
    targets = await startHttpTargets({ tls: pki.valid });
    targets.route("/old", { kind: "redirect", status: 301, location: secure("/en/") });
    targets.route("/en/", { kind: "respond", status: 200, body: "home" });
    targets.route("/shop", { kind: "redirect", status: 301, location: secure("/en/shop") });
    targets.route("/en/shop", { kind: "respond", status: 503, body: "down for maintenance" });
    targets.route("/loop", { kind: "redirect", status: 301, location: secure("/loop") });
    targets.route("/flaky", { kind: "respond", status: 404 });
    rig = await startPageRig("page-batch", {
      SITEDIAG_TRACE_PORTS: `${targets.httpPort},${targets.httpsPort ?? 0}`,
    });
    ({ dir, key } = rig);
  });

  afterAll(async () => {
    await rig?.close();
    await targets?.close();
  });

  async function openBatch(): Promise<Page> {
    const page = await rig.open("/", { viewport: { width: 1280, height: 900 } });
    await page.getByRole("tab", { name: "Batch" }).click();
    await page.getByLabel("API key").fill(key);
    return page;
  }

  afterEach(() => rig.settle());

  function cells(page: Page, row: number): Promise<string[]> {
    return page.locator("#batch-rows tr:not(.batch-detail)").nth(row).locator("td").allInnerTexts();
  }

  it("marks every row PASS or FAIL with the reason and its code, opens a failed row to its chain and waterfall, and writes them to CSV", async () => {
    const page = await openBatch();
    const lines = ["url,expected", `${secure("/old")},${secure("/en/")}`, secure("/shop"), secure("/loop"), "ftp://127.0.0.1/file"];
    await page.getByLabel("URLs, one per line").fill(lines.join("\n"));
    await page.getByRole("button", { name: "Trace all" }).click();
    await page.getByRole("status").getByText("Done: 4 of 4, 3 failed.").waitFor();

    expect(await cells(page, 0)).toEqual(["1 ▸", "PASS", secure("/old"), "200", secure("/en/"), "2", "ends at the expected final URL"]);
    // No expectation, yet a chain ending in a 503 fails: the same rule as the CLI's.
    expect(await cells(page, 1)).toEqual([
      "2 ▸",
      "FAIL",
      secure("/shop"),
      "503",
      secure("/en/shop"),
      "2",
      "the final URL answers 503 Service Unavailable final_status_error",
    ]);
    expect(await cells(page, 2)).toEqual([
      "3 ▸",
      "FAIL",
      secure("/loop"),
      "",
      secure("/loop"),
      "1",
      expect.stringMatching(/^redirect loop: .+ redirect_loop$/),
    ]);
    const refused = await cells(page, 3);
    expect(refused.slice(0, 2)).toEqual(["4", "FAIL"]);
    // Refused at input: its own code, as the CLI's table has it (issue 39: it said invalid_argument).
    expect(refused[6]).toMatch(/^not traced: .+ input_scheme$/);

    await page.getByRole("button", { name: "Row 2: show its chain" }).click();
    const opened = page.locator("#batch-rows tr.batch-detail");
    expect(await opened.locator(".batch-detail-verdict").innerText()).toBe(
      "Row 2: FAIL · the final URL answers 503 Service Unavailable final_status_error",
    );
    expect(await opened.locator("table.hops tbody tr").count()).toBe(2);
    expect(await opened.locator("table.hops tbody tr").nth(1).innerText()).toContain("503 Service Unavailable");
    expect(await opened.locator("svg.waterfall .bar.hop").count()).toBe(2);
    expect(await page.getByRole("button", { name: "Row 2: show its chain" }).getAttribute("aria-expanded")).toBe("true");
    await page.screenshot({ path: join(screenshots ?? dir, "page-batch.png"), fullPage: true });
    // One click closes it again.
    await page.getByRole("button", { name: "Row 2: show its chain" }).click();
    expect(await opened.count()).toBe(0);

    await page.getByLabel("Show failures only").check();
    expect(await page.locator("#batch-rows tr:visible").count()).toBe(3);

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download CSV" }).click()]);
    const csv = readFileSync(await download.path(), "utf8").split("\r\n");
    expect(csv[0]).toBe("index,url,expected_final_url,max_redirects,verdict,code,reason,final_status,final_url,hops,chain");
    expect(csv[1]).toBe(
      `1,${secure("/old")},${secure("/en/")},,PASS,,ends at the expected final URL,200,${secure("/en/")},2,301 ${secure("/old")} > 200 ${secure("/en/")}`,
    );
    expect(csv[2]).toBe(
      `2,${secure("/shop")},,,FAIL,final_status_error,the final URL answers 503 Service Unavailable,503,${secure("/en/shop")},2,301 ${secure("/shop")} > 503 ${secure("/en/shop")}`,
    );
    expect(csv[3]).toMatch(/^3,.+,,,FAIL,redirect_loop,"redirect loop: Hop 1 redirects back to .+, already in the chain",/);
  });

  it("re-runs only the rows that need a look, leaving the passed ones as they are", async () => {
    targets.route("/flaky", { kind: "respond", status: 404 });
    const page = await openBatch();
    await page.getByLabel("URLs, one per line").fill([secure("/en/"), secure("/flaky")].join("\n"));
    await page.getByRole("button", { name: "Check all" }).click();
    await page.getByRole("status").getByText("Done: 2 of 2, 1 failed.").waitFor();
    // A 404 is "up" to the contract; the audit still has to look at it.
    expect((await cells(page, 1)).slice(1, 2)).toEqual(["FAIL"]);
    expect((await cells(page, 1))[6]).toMatch(/^up, but the final URL answers 404 Not Found final_status_error$/);

    targets.route("/flaky", { kind: "respond", status: 200, body: "fixed" });
    const asked = () => targets.requests.filter((request) => request.target === "/en/").length;
    const before = asked();
    await page.getByRole("button", { name: "Re-run 1 row that did not pass" }).click();
    await page.getByRole("status").getByText("Done: 1 of 1, 0 failed.").waitFor();
    expect((await cells(page, 1)).slice(1, 4)).toEqual(["PASS", secure("/flaky"), "200"]);
    expect((await cells(page, 0)).slice(1, 2)).toEqual(["PASS"]);
    expect(asked()).toBe(before);
    expect(await page.getByRole("button", { name: "Re-run rows that did not pass" }).isDisabled()).toBe(true);
  });

  it("says the cost before running, and a batch costing more than the whole budget is not sent: its rows NOT RUN over the budget, the first that fit offered", async () => {
    const page = await openBatch();
    const many = Array.from({ length: 80 }, (_, i) => secure(`/en/?page=${i}`));
    await page.getByLabel("URLs, one per line").fill(many.join("\n"));
    expect(await page.locator("#batch-cost").textContent()).toBe("80 URLs: Check all costs 160 credits, Trace all 400.");
    await page.getByRole("button", { name: "Trace all" }).click();
    // The key's credits were read for free first (GET /api/v1/credits): nothing was sent to be refused.
    await page
      .getByRole("status")
      .getByText(/^Not run: 80 traces cost 400 credits; this key has \d+ of 300 left, enough for \d+\.$/)
      .waitFor();
    expect(await page.getByRole("alert").innerText()).toBe("");
    expect(await page.locator("#batch-offer").innerText()).toMatch(
      /At most 60 traces fit the key's whole budget of 300: .+sitediag keys set-budget KEY_ID N/,
    );
    expect(await page.getByRole("button", { name: /^Trace the first \d+ now$/ }).count()).toBe(1);
    expect((await cells(page, 79)).slice(1, 2)).toEqual(["NOT RUN"]);
    expect((await cells(page, 79))[6]).toMatch(/^over the budget: the key's \d+ credits left pay for \d+ traces$/);
    // The refusal's usage headers said what the key has: the next cost is weighed against it.
    expect(await page.locator("#batch-cost").textContent()).toMatch(
      /^80 URLs: Check all costs 160 credits, Trace all 400\. This key had \d+ of 300 left at \d\d:\d\d\. Trace all costs more than the whole budget of 300: no wait makes it affordable; at most 60 traces fit in one batch\.$/,
    );
  });

  it("marks the rows a Stop left behind NOT RUN, not waiting", async () => {
    targets.route("/hang", { kind: "hang" });
    const page = await openBatch();
    await page.getByLabel("URLs, one per line").fill([secure("/en/"), secure("/hang")].join("\n"));
    await page.getByRole("button", { name: "Check all" }).click();
    await page.locator("#batch-rows tr.passed").waitFor();
    await page.getByRole("button", { name: "Stop" }).click();
    await page.getByRole("status").getByText("Stopped: 1 of 2 done. 1 not run.").waitFor();
    expect(await cells(page, 1)).toEqual(["2", "NOT RUN", secure("/hang"), "", "", "", "stopped before it ran"]);
    expect(await page.getByRole("button", { name: "Re-run 1 row that did not pass" }).isEnabled()).toBe(true);
  });
});
